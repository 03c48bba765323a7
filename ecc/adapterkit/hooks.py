"""The command-hook protocol Claude Code made common, for adapters whose harness speaks it.

The harness runs ``ecc hook --harness NAME`` before (and after) a tool call with one JSON
object on stdin naming the event, the session, the tool and its input. ecc answers with the
exit status: 0 allows, 2 with the reason on stderr denies; a harness that can ask reads a
``hookSpecificOutput.permissionDecision = "ask"`` object on stdout instead (``"allow"`` for a
call a person approved while ecc held it). Harnesses differ in event names, field names and
tool names only, so one :class:`HookProtocol`, given those, parses the payload
(``ecc_parse_hook_payload``) and answers (``ecc_hook_response``).

Imported by an adapter's ``integration`` module on ``ecc hook``'s hot path: it imports
nothing but ``json`` and the contract's types, which that path has loaded already.
"""

from __future__ import annotations

import json

from ecc.contract.types import HookEvent, HookResponse, ToolCall

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from ecc.contract.types import HookDecision

DENIED = 2  # the exit status that stops the tool and shows stderr to the model


class HookProtocol:
    """One harness's dialect of the command-hook protocol.

    ``phases`` maps the harness's event names to ``pre_tool``/``post_tool``; ``kinds`` its
    lower-cased tool names to ecc's tool kinds (``shell``, ``edit``…), and a tool whose name
    starts with ``mcp_prefix`` (when given) is of kind ``mcp``. The ``*_field`` arguments name
    the payload's keys; a field given as None is not read (the event leaves it unset).
    ``text_inputs`` wraps a tool's string input into an object (``{"apply_patch": "patch"}``).
    ``ask_event`` is the ``hookEventName`` of the ask answer for a harness that can ask; without
    one, ask is answered as a deny whose reason says that ``product`` cannot ask.
    """

    def __init__(
        self,
        harness: str,
        *,
        phases: Mapping[str, str],
        kinds: Mapping[str, str],
        mcp_prefix: str | None = None,
        event_field: str = "hook_event_name",
        session_field: str = "session_id",
        tool_use_id_field: str | None = "tool_use_id",
        tool_field: str = "tool_name",
        input_field: str = "tool_input",
        cwd_field: str | None = "cwd",
        output_field: str | None = "tool_response",
        text_inputs: Mapping[str, str] | None = None,
        ask_event: str | None = None,
        product: str = "",
    ) -> None:
        self.harness = harness
        self.phases = phases
        self.kinds = kinds
        self.mcp_prefix = mcp_prefix
        self.event_field = event_field
        self.session_field = session_field
        self.tool_use_id_field = tool_use_id_field
        self.tool_field = tool_field
        self.input_field = input_field
        self.cwd_field = cwd_field
        self.output_field = output_field
        self.text_inputs = text_inputs or {}
        self.ask_event = ask_event
        self.product = product

    def kind(self, tool: str) -> str:
        """ecc's kind of the harness's tool ``tool`` (``other`` when unknown)."""
        fallback = "other"
        if self.mcp_prefix is not None and tool.startswith(self.mcp_prefix):
            fallback = "mcp"
        return self.kinds.get(tool.lower(), fallback)

    def parse(self, event: str, payload: Any) -> HookEvent:
        """The payload as a :class:`HookEvent`; a malformed one is an ``other`` event."""
        data = payload if isinstance(payload, dict) else {}
        name = str(data.get(self.event_field) or event)
        result = HookEvent(
            harness=self.harness,
            event=name,
            phase=self.phases.get(name, "other"),
            harness_session_id=data.get(self.session_field),
        )
        if self.tool_use_id_field is not None:
            result.tool_use_id = data.get(self.tool_use_id_field)
        tool = data.get(self.tool_field)
        if result.phase == "other" or not isinstance(tool, str) or not tool:
            result.phase = "other"
            return result
        tool_input = data.get(self.input_field)
        wrap = self.text_inputs.get(tool.lower())
        if wrap is not None and isinstance(tool_input, str):
            tool_input = {wrap: tool_input}
        result.call = ToolCall(
            tool=tool,
            input=tool_input if isinstance(tool_input, dict | str) else {},
            harness=self.harness,
            cwd=data.get(self.cwd_field) if self.cwd_field is not None else None,
            kind=self.kind(tool),
        )
        response = data.get(self.output_field) if self.output_field is not None else None
        if response is not None:
            result.output = response if isinstance(response, str) else json.dumps(response)
        return result

    def respond(self, decision: HookDecision) -> HookResponse:
        """The answer to ``decision``. A harness that cannot ask is told to deny, and the
        decision says so (it is recorded after the answer, as the harness was answered). An
        allow with a reason is a person's approval of a held call: a harness that can ask gets
        ``permissionDecision = "allow"`` (its prompt skipped, its deny and ask rules kept)."""
        if decision.event.phase != "pre_tool":
            return HookResponse()
        if decision.decision == "allow":
            if decision.reason and self.ask_event is not None:
                return self._permission("allow", decision.reason)
            return HookResponse()
        if decision.decision == "ask":
            if self.ask_event is not None:
                return self._permission("ask", decision.reason)
            decision.decision = "deny"
            decision.reason += (
                f" ({self.product} hooks cannot ask for confirmation, so ecc denies it)"
            )
        return HookResponse(exit_code=DENIED, stderr=decision.reason + "\n")

    def _permission(self, verdict: str, reason: str) -> HookResponse:
        answer = {
            "hookSpecificOutput": {
                "hookEventName": self.ask_event,
                "permissionDecision": verdict,
                "permissionDecisionReason": reason,
            }
        }
        return HookResponse(stdout=json.dumps(answer) + "\n")
