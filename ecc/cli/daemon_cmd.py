"""``ecc daemon``: recover crashed sessions, start queued ones, prune old worktrees."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say


@click.command("daemon")
@click.option("--once", is_flag=True, help="Run one pass and exit.")
@click.option(
    "--interval",
    type=click.FloatRange(min=0.05),
    metavar="SECONDS",
    help="Seconds between passes (default: heartbeat_interval_secs).",
)
@json_option
def daemon_command(once: bool, interval: float | None, as_json: bool) -> None:
    """Watch sessions: fail dead runners, mark stale ones, start queued sessions, prune.

    Logs go to stderr and to <state dir>/logs/daemon.log (rotated at 5 MiB, 3 kept; the level
    of ecc -v/--log-level, else info). SIGTERM or Ctrl-C stops it cleanly.
    Only one daemon may run per store.
    """
    from ecc.runtime import logs, paths
    from ecc.runtime.config.view import view
    from ecc.sessions.daemon import Daemon
    from ecc.store.open import open_store

    config = view()
    directory = paths.ensure_private_dir(paths.state_dir() / "logs")
    logs.to_file(directory / "daemon.log", stderr=True)  # rotating; the level of -v/--log-level
    store = open_store(config=config)
    daemon = Daemon(store, config, interval or config.heartbeat_interval_secs)
    if not once and not as_json:
        say("Starting ecc daemon (Ctrl-C to stop)...", err=True)
    report = daemon.serve(once=once)
    if as_json:
        emit_json(report)
    elif once:
        for step, result in report.items():
            say(f"{step}: {result if result else 'nothing to do'}")
