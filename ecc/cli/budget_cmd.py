"""``ecc budget``: token and cost use against the configured budgets (read only)."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.runtime.money import format_cost


def _line(name: str, scope: dict) -> str:
    tokens, cost = scope["tokens"], scope["cost_usd"]
    token_limit = f"{int(tokens['limit']):,}" if tokens["limit"] else "no budget"
    cost_limit = format_cost(cost["limit"]) if cost["limit"] else "no budget"
    state = scope.get("budget_state") or scope["state"]
    return (
        f"{name:<12} tokens {int(tokens['used']):>12,} / {token_limit:<12} "
        f"cost {format_cost(cost['used']):>10} / {cost_limit:<10} {state}"
    )


@click.command("budget")
@click.option("--all", "show_all", is_flag=True, help="Every session, not only active ones.")
@json_option
def budget_command(show_all: bool, as_json: bool) -> None:
    """Show token and cost use against budgets, overall and per session.

    Only shows: alerts and the limit action (budget_action) are applied by the runner and the
    daemon.
    """
    from ecc.observability.budgets import report
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    store = open_store(config=config)
    try:
        data = report(store, config, active_only=not show_all)
    finally:
        store.close()
    for row in [data["overall"], *data["sessions"]]:
        row.pop("level", None)
    if as_json:
        emit_json(data)
        return
    say(_line("overall", data["overall"]))
    for row in data["sessions"]:
        say(_line(row["id"], row))
    say(f"at a limit: {data['action']}")
