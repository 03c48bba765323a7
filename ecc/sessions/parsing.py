"""What the harness adapter makes of stored output lines: usage, tool calls, its session id.

:class:`OutputParser` feeds every stored line to the adapter's ``ecc_parse_output_line`` and
records the events it returns; the runner's writer uses it after each batch it stores, and so
does a drain of a dead runner's spool (:func:`ecc.sessions.spool.drain_spool`).

A tool call seen in the output is scored with the scorers ``ecc hook`` uses
(:class:`OutputScorer`) and recorded as ``observed``: it ran, or is running, and nothing was
enforced. When the hook saw the same call too, the store merges the two into one row with the
hook's score and decision (:meth:`ecc.store.records.Records.record_tool_call`).
"""

from __future__ import annotations

import logging

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.runner")


class OutputParser:
    """The session's output parser: resolved on the first stored line, then called per line
    (a parser failure is logged, never fatal)."""

    def __init__(self, hook: Any, session: Session, scorer: OutputScorer | None = None) -> None:
        self.hook = hook
        self.session = session
        self.scorer = scorer
        self.parser: Callable[..., Any] | None = None
        self.resolved = False

    @classmethod
    def for_session(cls, config: Any, session: Session) -> OutputParser | None:
        """The parser of the session's harness (scoring its tool calls under ``config``), or
        None when no adapter parses its output."""
        from ecc.runtime.plugins.loader import get_plugins

        plugins = get_plugins(config)
        hook = plugins.harness_hook(session.harness).ecc_parse_output_line
        if not hook.get_hookimpls():
            return None
        return cls(hook, session, OutputScorer(config, plugins.hook))

    def feed(self, store: Store, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Parse stored rows ``(seq, stream, ts, line)`` and record what the parser finds."""
        if not rows:
            return
        if not self.resolved:
            _, stream, _, line = rows[0]
            self.parser = owning_parser(self.hook, self.session.harness, line, stream)
            self.resolved = True
        if self.parser is None:
            return
        for _, stream, _, line in rows:
            try:
                events = self.parser(harness=self.session.harness, line=line, stream=stream)
            except Exception as exc:
                log.warning("output parser failed on a line: %s", exc)
                continue
            for event in events or ():
                try:
                    apply_output_event(store, self.session, event, self.scorer)
                except Exception as exc:
                    log.warning("could not record %s event: %s", getattr(event, "kind", "?"), exc)


def owning_parser(hook: Any, harness: str, line: str, stream: str) -> Callable[..., Any] | None:
    """The one ``ecc_parse_output_line`` implementation that parses ``harness``, or None.

    ``hook`` holds only the plugins that declare the harness (``PluginSet.harness_hook``), so
    one implementation is the parser whatever it answers for the first line. When several
    declare it, the first (in pluggy's order) that answers the first line owns the session, and
    later lines skip the hook machinery (a full pluggy call per line would cap capture
    throughput).
    """
    from ecc.runtime.plugins.calls import implementations

    found = implementations(hook)
    if len(found) == 1:
        return found[0]
    for impl in found:
        try:
            if impl(harness=harness, line=line, stream=stream) is not None:
                return impl
        except Exception as exc:
            log.warning("output parser %s failed: %s", impl.name, exc)
    return None


class OutputScorer:
    """Scores a session's tool calls seen in its output with every risk scorer, as ``ecc hook``
    does (:func:`ecc.observability.risk.assess`): ``hook`` is the plugins' ``pm.hook``, loaded
    once for the session."""

    def __init__(self, config: Any, hook: Any) -> None:
        self.config = config
        self.hook = hook
        self.limit = config.risk.get("max_input_bytes")

    def score(
        self, session: Session, tool: str, tool_input: Any, size: int
    ) -> tuple[float | None, str | None, list[str]]:
        """``(score, action, reasons)`` of one call whose input is ``size`` bytes of JSON; a
        call over ``risk.max_input_bytes`` is not scored (as in the hook), the reason says so."""
        if self.limit is not None and size > self.limit:
            why = f"not scored: its input is {size} bytes, over risk.max_input_bytes ({self.limit})"
            return None, None, [why]
        from ecc.contract.types import ToolCall
        from ecc.observability.risk import assess

        call = ToolCall(
            tool=tool,
            input=tool_input if isinstance(tool_input, dict | str) else {},
            harness=session.harness,
            session_id=session.id,
            cwd=session.worktree_path or session.working_dir,
        )
        assessment = assess(call, self.config, self.hook)
        for error in assessment.errors:
            log.warning("risk scorer failed on an output tool call: %s", error)
        return assessment.score, assessment.action, assessment.reasons


def apply_output_event(
    store: Store, session: Session, event: Any, scorer: OutputScorer | None = None
) -> None:
    """Record one :class:`ecc.contract.types.OutputEvent` parsed by the harness adapter (a
    tool call scored by ``scorer`` when given)."""
    data = event.data or {}
    if event.kind == "harness_session" and data.get("id"):
        store.update_session(session.id, harness_session_id=str(data["id"]))
    elif event.kind == "usage":
        from ecc.observability import budgets

        if budgets.record_usage(store, session.id, data):
            budgets.check(store, session_id=session.id)
    elif event.kind == "tool_call":
        _record_call(store, session, data, scorer)
    elif event.kind == "final":  # the agent's answer: an event, and a turn of the conversation
        text = str(data.get("text", ""))
        store.add_event(session.id, "output_final", text[:2000], data)
        store.add_answer(session.id, session.attempts or 1, text, delta=bool(data.get("delta")))
    else:
        store.add_event(session.id, f"output_{event.kind}", str(data.get("text", ""))[:2000], data)


def _record_call(
    store: Store, session: Session, data: dict[str, Any], scorer: OutputScorer | None
) -> None:
    import json

    tool = str(data.get("tool") or "unknown")
    tool_input = data.get("input", {})
    score: float | None = None
    action: str | None = None
    reasons: list[str] = []
    if scorer is not None:
        size = len(json.dumps(tool_input, default=str).encode("utf-8", "replace"))
        score, action, reasons = scorer.score(session, tool, tool_input, size)
    call_id = data.get("id")
    store.record_tool_call(
        session_id=session.id,
        harness=session.harness,
        tool=tool,
        input=tool_input,
        score=score,
        action=action,
        reasons=reasons,
        decision="observed",
        call_id=str(call_id) if isinstance(call_id, str | int) and call_id != "" else None,
        source="output",
    )
