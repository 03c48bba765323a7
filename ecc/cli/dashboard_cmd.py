"""``ecc dashboard``: the Textual terminal UI (also what a bare ``ecc`` opens in a terminal).

Textual is imported only here, when the dashboard actually starts, so no other command pays for it.
"""

from __future__ import annotations

import sys

import click


@click.command("dashboard")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05, max=10),
    default=0.25,
    show_default=True,
    metavar="SECONDS",
    help="How often to look for changes in the session store.",
)
@click.option("--filter", "query", default="", metavar="TEXT", help="Start with this filter.")
def dashboard_command(interval: float, query: str) -> None:
    """Watch and steer every session: output, tool calls, diffs, memory, budgets.

    Keys are shown in the footer: n new, s stop, u resume, m merge, p prune, d remove,
    / search memory, f filter, r refresh, 1-5 panes, q quit.
    """
    from ecc.contract.errors import EccError
    from ecc.runtime.extras import require_extra

    require_extra("tui", "ecc dashboard", "textual")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise EccError("ecc dashboard needs a terminal (use ecc sessions --json in scripts)")
    from ecc.tui.app import run

    run(interval=interval, query=query)
