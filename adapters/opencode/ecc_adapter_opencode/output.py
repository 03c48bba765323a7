"""Parse ``opencode run --format json`` lines into session events.

Every line carries ``sessionID`` (what ``--session`` takes); ``step_start`` is reported as the
harness session; ``tool_use`` holds a finished tool part (``part.tool``, ``part.state.input``);
``text`` a finished text part (the answer); ``step_finish`` the step's tokens and cost. Each step
reports only itself, so usage is an increment (``cumulative: False``).
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
    part = table(data.get("part"))
    if kind == "step_start":
        return harness_session(data.get("sessionID"))
    if kind == "tool_use":
        state = table(part.get("state"))
        return [tool_call(part.get("tool"), state.get("input"), part.get("callID"))]
    if kind == "text":
        text = part.get("text")
        return [final(text)] if isinstance(text, str) else []
    if kind == "step_finish":
        tokens = table(part.get("tokens"))
        cache = table(tokens.get("cache"))
        input_tokens = as_int(tokens.get("input")) + as_int(cache.get("read"))
        input_tokens += as_int(cache.get("write"))
        output_tokens = as_int(tokens.get("output")) + as_int(tokens.get("reasoning"))
        return [usage(input_tokens, output_tokens, as_cost(part.get("cost")), cumulative=False)]
    if kind == "error":
        failure = data.get("error")
        if isinstance(failure, dict):
            detail = table(failure.get("data"))
            message = detail.get("message") or failure.get("name")
        else:
            message = failure
        return [error(message)]
    return []
