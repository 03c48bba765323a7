"""Parse ``opencode run --format json`` lines into session events.

Every line carries ``sessionID`` (what ``--session`` takes); ``step_start`` is reported as the
harness session; ``tool_use`` holds a finished tool part (``part.tool``, ``part.state.input``);
``text`` a finished text part (the answer); ``step_finish`` the step's tokens and cost. Each step
reports only itself, so usage is an increment (``cumulative: False``).
"""

from __future__ import annotations

from typing import Any

from ecc.adapterkit import as_cost, as_int, parse_json_line
from ecc.contract.types import OutputEvent


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    part: dict[str, Any] = data.get("part") if isinstance(data.get("part"), dict) else {}
    if kind == "step_start":
        sid = data.get("sessionID")
        return [OutputEvent("harness_session", {"id": sid})] if isinstance(sid, str) and sid else []
    if kind == "tool_use":
        state = part.get("state") if isinstance(part.get("state"), dict) else {}
        tool_input = state.get("input")
        return [
            OutputEvent(
                "tool_call",
                {
                    "tool": str(part.get("tool") or ""),
                    "input": tool_input if isinstance(tool_input, dict) else {},
                    "id": part.get("callID"),
                },
            )
        ]
    if kind == "text":
        text = part.get("text")
        return [OutputEvent("final", {"text": text})] if isinstance(text, str) else []
    if kind == "step_finish":
        tokens = part.get("tokens") if isinstance(part.get("tokens"), dict) else {}
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        return [
            OutputEvent(
                "usage",
                {
                    "input_tokens": as_int(tokens.get("input"))
                    + as_int(cache.get("read"))
                    + as_int(cache.get("write")),
                    "output_tokens": as_int(tokens.get("output")) + as_int(tokens.get("reasoning")),
                    "cost_usd": as_cost(part.get("cost")),
                    "cumulative": False,
                },
            )
        ]
    if kind == "error":
        error = data.get("error")
        if isinstance(error, dict):
            detail = error.get("data") if isinstance(error.get("data"), dict) else {}
            message = detail.get("message") or error.get("name")
        else:
            message = error
        return [OutputEvent("error", {"message": str(message or "error")})]
    return []
