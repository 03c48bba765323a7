"""The session events an ``ecc_parse_output_line`` returns, built the one way the core reads.

Each takes values straight from a harness's JSON and keeps the event well formed whatever they
are: a tool's input that is not an object becomes ``{}``, a missing message becomes ``"error"``.
"""

from __future__ import annotations

from ecc.contract.types import OutputEvent


def harness_session(value: object) -> list[OutputEvent]:
    """The harness's own session id (what its resume flag takes), when ``value`` is one."""
    return (
        [OutputEvent("harness_session", {"id": value})] if isinstance(value, str) and value else []
    )


def tool_call(tool: object, tool_input: object, call_id: object) -> OutputEvent:
    """A tool call the agent made (``call_id`` the harness's id of it, or None)."""
    return OutputEvent(
        "tool_call",
        {
            "tool": str(tool or ""),
            "input": tool_input if isinstance(tool_input, dict) else {},
            "id": call_id,
        },
    )


def usage(
    input_tokens: int, output_tokens: int, cost_usd: float | None = None, *, cumulative: bool
) -> OutputEvent:
    """Token usage (and cost, when the harness reports it). ``cumulative``: the harness session's
    running total so far, replacing the earlier one; else an increment to add."""
    return OutputEvent(
        "usage",
        {
            "input_tokens": input_tokens,
            "output_tokens": output_tokens,
            "cost_usd": cost_usd,
            "cumulative": cumulative,
        },
    )


def final(text: str) -> OutputEvent:
    """The agent's answer."""
    return OutputEvent("final", {"text": text})


def error(message: object) -> OutputEvent:
    """The run failed: the harness's message, or ``"error"`` when it gave none."""
    return OutputEvent("error", {"message": str(message or "error")})
