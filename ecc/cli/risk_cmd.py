"""``ecc risk``: score a tool call the way ``ecc hook`` would, and show why."""

from __future__ import annotations

import json

import click

from ecc.cli.output import emit_json, json_option, say


@click.group("risk")
def risk_group() -> None:
    """Score tool calls for risk (every enabled ecc.risk_scorers plugin, thresholds from [risk])."""


@risk_group.command("score")
@click.option("--tool", "tool", required=True, help="Tool name, e.g. Bash, Write, Edit, Read.")
@click.option(
    "--input",
    "text",
    required=True,
    help="The call's input: a summary or command line, or a JSON object of its parameters.",
)
@click.option("--harness", default="", help="Harness the call came from (for scorers).")
@json_option
def score_command(tool: str, text: str, harness: str, as_json: bool) -> None:
    """Print the score (0..1), the action it maps to, and each contribution's reason."""
    from ecc.contract.types import ToolCall
    from ecc.observability.risk import score_call
    from ecc.runtime.config.view import view

    payload: dict[str, object] | str = text
    if text.lstrip().startswith("{"):
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            payload = parsed
    config = view()
    assessment = score_call(ToolCall(tool=tool, input=payload, harness=harness), config)
    if as_json:
        emit_json({"tool": tool, **assessment.as_dict()})
        return
    say(f"score: {assessment.score:.2f}")
    say(f"action: {assessment.action}")
    for contribution in assessment.contributions:
        reason = contribution.reason or "(base)"
        say(f"  {contribution.amount:+.2f}  {reason}  [{contribution.scorer}]")
    for error in assessment.errors:
        say(f"Warning: scorer failed: {error}", err=True)
