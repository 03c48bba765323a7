"""``ecc run-session`` (hidden): the runner of one session; see ecc.sessions.runner."""

from __future__ import annotations

import sys

import click


@click.command("run-session", hidden=True)
@click.option("--session-id", required=True, help="The session to run (read from the store).")
@click.option(
    "--remote",
    is_flag=True,
    help="Run as a worker of a pool (lease heartbeat, mirror checkout, branch push): for "
    "engines that start a command (Slurm's sbatch) rather than a Python call.",
)
@click.option("--host", metavar="NAME", help="The worker name recorded as runner_host.")
def run_session_command(session_id: str, remote: bool, host: str | None) -> None:
    """Run one session's harness and record everything it does (started by ecc run)."""
    if remote:
        from ecc.sessions.runner import run_remote_session

        outcome = run_remote_session(session_id, host=host)
        sys.exit(0 if outcome in ("completed", "refused-duplicate") else 1)
    from ecc.sessions.runner import run_session

    sys.exit(run_session(session_id))
