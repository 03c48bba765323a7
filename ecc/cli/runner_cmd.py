"""``ecc run-session`` (hidden): the runner of one session; see ecc.sessions.runner."""

from __future__ import annotations

import sys

import click

from ecc.cli.options import RUN_SESSION, click_options


@click.command("run-session", hidden=True)
@click_options(RUN_SESSION)
def run_session_command(session_id: str, remote: bool, host: str | None) -> None:
    """Run one session's harness and record everything it does (started by ecc run)."""
    if remote:
        from ecc.sessions.runner import run_remote_session

        outcome = run_remote_session(session_id, host=host)
        sys.exit(0 if outcome in ("completed", "refused-duplicate") else 1)
    from ecc.sessions.runner import run_session

    sys.exit(run_session(session_id))
