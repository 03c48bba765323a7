"""``ecc run`` and ``ecc start``: create a session, start it, and (``run``) follow its output."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click

from ecc.cli import options
from ecc.cli.options import click_options
from ecc.cli.output import emit_json, say


@click.command("run")
@click_options(options.RUN)
@click.argument("task", required=False)
def run_command(
    task: str | None,
    harness: str | None,
    profile: str | None,
    use_worktree: bool | None,
    name: str,
    executor: str | None,
    cwd: Path | None,
    as_json: bool,
    detach: bool,
    remote: str | None,
    count: int | None = None,
    check: str | None = None,
    check_timeout: str | None = None,
    template: str | None = None,
    variables: tuple[str, ...] = (),
) -> None:
    """Run an agent on TASK as a managed session and follow its output.

    Ctrl-C detaches (the session keeps running; exit status 130). Otherwise the exit status is
    the session's: 0 when completed, the harness's exit code when it failed.

    A group of sessions on one task, compared with ecc group ID: --harness a,b, --count N,
    --check COMMAND or --template NAME (exit status 0 when every session completed and every
    check passed).
    """
    grouped = (count, check, check_timeout, template) != (None,) * 4 or variables
    if grouped or "," in (harness or ""):
        if remote:
            raise click.UsageError("a group of sessions runs here, not on --remote")
        from ecc.cli.group_run import run_group

        run_group(
            task,
            harness=harness,
            profile=profile,
            use_worktree=use_worktree,
            name=name,
            executor=executor,
            cwd=cwd,
            as_json=as_json,
            detach=detach,
            count=count,
            check=check,
            check_timeout=check_timeout,
            template=template,
            variables=variables,
        )
        return
    if task is None:
        raise click.MissingParameter(param_type="argument", param_hint="'TASK'")
    if remote:
        from ecc.remote.client import run_remote

        run_remote(
            remote,
            task,
            harness=harness,
            profile=profile,
            use_worktree=use_worktree,
            name=name,
            cwd=cwd,
            detach=detach,
            as_json=as_json,
        )
        return
    from ecc.cli.fast.run import start_session, started_text

    store, session = start_session(task, harness, profile, use_worktree, name, cwd, executor)
    if detach:  # also the plain form's path without click: ecc.cli.fast.run.main
        click.echo(started_text(session, as_json))
        return
    if not as_json:
        say(f"Session {session.id} started ({session.harness}); Ctrl-C detaches.", err=True)
    try:
        final = follow(store, session.id, quiet=as_json)
    except KeyboardInterrupt:
        say(
            f"\nDetached from session {session.id}; it keeps running (ecc logs -f {session.id}).",
            err=True,
        )
        sys.exit(130)
    from ecc.sessions.manager import exit_status

    if as_json:
        emit_json(final.as_dict())
    else:
        say(f"Session {final.id} {final.state.value}: {final.reason}", err=True)
    sys.exit(exit_status(final))


@click.command("start")
@click_options(options.START)
@click.argument("task", required=False)
def start_command(
    task: str | None,
    harness: str | None,
    profile: str | None,
    use_worktree: bool | None,
    name: str,
    executor: str | None,
    cwd: Path | None,
    as_json: bool,
    remote: str | None,
    count: int | None,
    check: str | None,
    check_timeout: str | None,
    template: str | None,
    variables: tuple[str, ...],
) -> None:
    """Start a session on TASK and return at once (the same as ecc run -d)."""
    context = click.get_current_context()
    context.invoke(run_command, detach=True, **context.params)


def follow(
    store: Any,
    session_id: str,
    *,
    quiet: bool = False,
    after_seq: int = 0,
    stream: str | None = None,
    poll: float = 0.1,
) -> Any:
    """Print new output lines until the session is finished and every line is shown."""
    from ecc.sessions.daemon import reap_quietly
    from ecc.store.models import TERMINAL

    next_reap = time.monotonic() + 1.0
    while True:
        current = store.get_session(session_id)
        rows = store.read_output(session_id, after_seq=after_seq, stream=stream, limit=5000)
        for row in rows:
            after_seq = row["seq"]
            if not quiet:
                say(row["line"], err=row["stream"] == "stderr")
        if rows:
            continue
        if current is None or current.state in TERMINAL:
            # one last read: lines written just before the final state
            rows = store.read_output(session_id, after_seq=after_seq, stream=stream)
            for row in rows:
                if not quiet:
                    say(row["line"], err=row["stream"] == "stderr")
            return current
        if time.monotonic() >= next_reap:  # a dead worker is noticed by the lease
            reap_quietly(store)
            next_reap = time.monotonic() + 1.0
        time.sleep(poll)
