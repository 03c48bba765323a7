"""Parse ``claude --print --verbose --output-format stream-json`` lines into session events.

One JSON object per line: ``system/init`` (carries ``session_id``), ``assistant`` messages whose
content holds ``tool_use`` blocks, ``user`` messages with tool results, and one ``result`` line at
the end with the answer, the run's usage and ``total_cost_usd``. Usage comes only from ``result``:
assistant lines repeat a message's usage once per content block and would count it twice. The
result covers this run only (a resumed run reports its own), so it is an increment
(``cumulative: False``).
"""

from __future__ import annotations

from ecc.adapterkit import as_cost, as_int, parse_json_line, table
from ecc.adapterkit.events import error, final, harness_session, tool_call, usage
from ecc.contract.types import OutputEvent


def parse_line(line: str) -> list[OutputEvent]:
    data = parse_json_line(line)
    if data is None:
        return []
    kind = data.get("type")
    if kind == "system" and data.get("subtype") == "init":
        return harness_session(data.get("session_id"))
    if kind == "assistant":
        message = data.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return [
            tool_call(block.get("name"), block.get("input"), block.get("id"))
            for block in (content if isinstance(content, list) else [])
            if isinstance(block, dict) and block.get("type") == "tool_use"
        ]
    if kind == "result":
        events = harness_session(data.get("session_id"))
        tokens = table(data.get("usage"))
        input_tokens = (
            as_int(tokens.get("input_tokens"))
            + as_int(tokens.get("cache_creation_input_tokens"))
            + as_int(tokens.get("cache_read_input_tokens"))
        )
        cost = as_cost(data.get("total_cost_usd"))
        events.append(
            usage(input_tokens, as_int(tokens.get("output_tokens")), cost, cumulative=False)
        )
        result = data.get("result")
        if data.get("is_error") or data.get("subtype") != "success":
            events.append(
                error(result if isinstance(result, str) and result else data.get("subtype"))
            )
        elif isinstance(result, str):
            events.append(final(result))
        return events
    return []
