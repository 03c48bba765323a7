"""Parse ``claude --print --verbose --output-format stream-json`` lines into session events.

One JSON object per line: ``system/init`` (carries ``session_id``), ``assistant`` messages whose
content holds ``tool_use`` blocks, ``user`` messages with tool results, and one ``result`` line at
the end with the answer, the run's usage and ``total_cost_usd``. Usage comes only from ``result``:
assistant lines repeat a message's usage once per content block and would count it twice. The
result covers this run only (a resumed run reports its own), so it is an increment
(``cumulative: False``).
"""

from __future__ import annotations

from typing import Any

from ecc.adapterkit import as_cost, as_int, parse_json_line
from ecc.contract.types import OutputEvent


def _session(data: dict[str, Any]) -> list[OutputEvent]:
    sid = data.get("session_id")
    return [OutputEvent("harness_session", {"id": sid})] if isinstance(sid, str) and sid else []


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    if kind == "system" and data.get("subtype") == "init":
        return _session(data)
    if kind == "assistant":
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        events = []
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                tool_input = block.get("input")
                events.append(
                    OutputEvent(
                        "tool_call",
                        {
                            "tool": str(block.get("name") or ""),
                            "input": tool_input if isinstance(tool_input, dict) else {},
                            "id": block.get("id"),
                        },
                    )
                )
        return events
    if kind == "result":
        events = _session(data)
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        events.append(
            OutputEvent(
                "usage",
                {
                    "input_tokens": as_int(usage.get("input_tokens"))
                    + as_int(usage.get("cache_creation_input_tokens"))
                    + as_int(usage.get("cache_read_input_tokens")),
                    "output_tokens": as_int(usage.get("output_tokens")),
                    "cost_usd": as_cost(data.get("total_cost_usd")),
                    "cumulative": False,
                },
            )
        )
        result = data.get("result")
        if data.get("is_error") or data.get("subtype") != "success":
            message = result if isinstance(result, str) and result else data.get("subtype")
            events.append(OutputEvent("error", {"message": str(message or "error")}))
        elif isinstance(result, str):
            events.append(OutputEvent("final", {"text": result}))
        return events
    return []
