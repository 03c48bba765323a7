"""``ecc run-session`` (hidden): the detached runner of one session; see ecc.sessions.runner."""

from __future__ import annotations

import sys

import click


@click.command("run-session", hidden=True)
@click.option("--session-id", required=True, help="The session to run (read from the store).")
def run_session_command(session_id: str) -> None:
    """Run one session's harness and record everything it does (started by ecc run)."""
    from ecc.sessions.runner import run_session

    sys.exit(run_session(session_id))
