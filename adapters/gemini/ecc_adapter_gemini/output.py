"""Parse ``gemini -o stream-json`` lines into session events.

``init`` carries the session id (what ``--resume`` takes); ``tool_use`` a tool call with its
``parameters``; assistant ``message`` lines carry the answer, possibly in pieces (``delta: true``:
each piece extends the previous ``final`` text); ``result`` has the run's token stats. A resumed
run reports only its own tokens, so usage is an increment (``cumulative: False``).
"""

from __future__ import annotations

from ecc.adapterkit import as_int, parse_json_line, table
from ecc.adapterkit.events import error, harness_session, tool_call, usage
from ecc.contract.types import OutputEvent


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    if kind == "init":
        return harness_session(data.get("session_id"))
    if kind == "tool_use":
        return [tool_call(data.get("tool_name"), data.get("parameters"), data.get("tool_id"))]
    if kind == "message" and data.get("role") == "assistant":
        content = data.get("content")
        if not isinstance(content, str):
            return []
        return [OutputEvent("final", {"text": content, "delta": bool(data.get("delta"))})]
    if kind == "result":
        stats = table(data.get("stats"))
        input_tokens, output_tokens = (
            as_int(stats.get("input_tokens")),
            as_int(stats.get("output_tokens")),
        )
        events = [usage(input_tokens, output_tokens, cumulative=False)]
        if data.get("status") not in (None, "success"):
            failure = data.get("error")
            message = failure.get("message") if isinstance(failure, dict) else data.get("status")
            events.append(OutputEvent("error", {"message": str(message)}))  # "None" stays "None"
        return events
    if kind == "error":
        return [error(data.get("message"))]
    return []
