"""Parse ``gemini -o stream-json`` lines into session events.

``init`` carries the session id (what ``--resume`` takes); ``tool_use`` a tool call with its
``parameters``; assistant ``message`` lines carry the answer, possibly in pieces (``delta: true``:
each piece extends the previous ``final`` text); ``result`` has the run's token stats. A resumed
run reports only its own tokens, so usage is an increment (``cumulative: False``).
"""

from __future__ import annotations

from ecc.adapterkit import as_int, parse_json_line
from ecc.contract.types import OutputEvent


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    if kind == "init":
        sid = data.get("session_id")
        return [OutputEvent("harness_session", {"id": sid})] if isinstance(sid, str) and sid else []
    if kind == "tool_use":
        params = data.get("parameters")
        return [
            OutputEvent(
                "tool_call",
                {
                    "tool": str(data.get("tool_name") or ""),
                    "input": params if isinstance(params, dict) else {},
                    "id": data.get("tool_id"),
                },
            )
        ]
    if kind == "message" and data.get("role") == "assistant":
        content = data.get("content")
        if not isinstance(content, str):
            return []
        return [OutputEvent("final", {"text": content, "delta": bool(data.get("delta"))})]
    if kind == "result":
        stats = data.get("stats") if isinstance(data.get("stats"), dict) else {}
        events = [
            OutputEvent(
                "usage",
                {
                    "input_tokens": as_int(stats.get("input_tokens")),
                    "output_tokens": as_int(stats.get("output_tokens")),
                    "cost_usd": None,
                    "cumulative": False,
                },
            )
        ]
        if data.get("status") not in (None, "success"):
            error = data.get("error")
            message = error.get("message") if isinstance(error, dict) else data.get("status")
            events.append(OutputEvent("error", {"message": str(message)}))
        return events
    if kind == "error":
        return [OutputEvent("error", {"message": str(data.get("message") or "error")})]
    return []
