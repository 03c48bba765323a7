"""Starting a session: ``ecc run -d`` / ``ecc start``, and the runner's ``ecc run-session``.

:func:`start_session` is what both ``ecc run`` and ``ecc start`` do first: open the store
and start the session (``ecc.sessions.service.start``) with the cached config view. It and the
text printed for a started session live here, beside the click-free form of these command
lines, because starting sessions is a hot path: an agent or a script may start many, and each
``ecc run -d`` also starts a runner process that competes for the same CPUs.

:func:`main` is the plain form of those command lines without click (about 30 ms of imports
and parsing), read with the options declared in :mod:`ecc.cli.options`: ``run -d``/``start``
with known options and one TASK, and ``run-session --session-id ID`` exactly as the ``local``
executor spawns it. Anything else (``--help``, a usage error, ``--remote``, ``ecc run`` without
``-d``, ``--``, a ``--cwd`` click would refuse) returns None and click handles the command line
as usual, with its own messages. What this path prints and its exit statuses are click's:
``Error: <sanitised message>`` on stderr and the error's exit code (1) for an
:class:`ecc.contract.errors.EccError`, ``Aborted!`` and 1 on Ctrl-C, a quiet 1 when stdout's
reader has gone.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any


def start_session(
    task: str,
    harness: str | None,
    profile: str | None,
    use_worktree: bool | None,
    name: str,
    cwd: Path | None,
    executor: str | None = None,
) -> tuple[Any, Any]:
    """Start the session with the cached config view; returns (store, session)."""
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions import manager, service
    from ecc.store.open import open_store

    config = fastconfig.view()  # validated, cached: ``ecc run -d`` imports no pydantic
    _warn(fastconfig.ignored_notice(cwd))  # the runner reads the config of the session's dir
    if config.auto_create_worktrees if use_worktree is None else use_worktree:
        from ecc.sessions import provision

        # what [worktree] copy_ignored / setup will do, before a runner does it the first time
        _warn(provision.first_time_notice(cwd or Path.cwd(), config))
    store = open_store(config=config)
    request = manager.Request(
        task=task,
        harness=harness,
        profile=profile,
        use_worktree=use_worktree,
        name=name,
        cwd=cwd,
        executor=executor,
    )
    session = service.start(store, request, config, warn=_warn)
    if session.use_worktree:
        from ecc.sessions import provision

        _warn(provision.dirty_warning(session))
    return store, session


def _warn(line: str | None) -> None:
    if line:
        from ecc.runtime.terminal import sanitize

        sys.stderr.write(sanitize(line) + "\n")


def started_text(session: Any, as_json: bool, terminal: bool | None = None) -> str:
    """What ``ecc run -d`` prints for a started session: ``--json``, the session object; on a
    terminal, a sentence; else the bare id, so ``ID=$(ecc run -d …)`` needs no parsing.
    ``terminal`` defaults to whether stdout is one."""
    from ecc.runtime.terminal import json_text, sanitize

    if as_json:
        return json_text(session.as_dict())
    if terminal is None:
        terminal = sys.stdout.isatty()
    return sanitize(f"Session started: {session.id}" if terminal else session.id)


def parse_start(args: list[str]) -> dict[str, Any] | None:
    """The parameters of a plain ``run -d …``/``start …`` command line, else None."""
    from ecc.cli import options

    command, rest = args[0], args[1:]
    params = options.parse(
        options.RUN if command == "run" else options.START, rest, rest="tasks", dashdash=False
    )
    if params is None or len(params["tasks"]) != 1:
        return None  # usage errors and every unusual form: click's messages
    if command == "run" and not params.pop("detach"):
        return None  # ecc run without -d follows the session (not a start-up path)
    if "," in (params["harness"] or ""):
        return None  # several harnesses: a group (ecc.cli.group_run)
    params["task"] = params.pop("tasks")[0]
    return params


def _stream_ok(stream: Any) -> bool:
    """Whether printing to ``stream`` directly writes what click.echo would (not ASCII-only)."""
    import codecs

    encoding = getattr(stream, "encoding", None)
    if not encoding:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return False


def _echo(text: str, stream: Any) -> None:
    stream.write(text + "\n")
    stream.flush()


def main(args: list[str]) -> int | None:
    """Run the plain form of ``args`` (``run -d …``, ``start …``, ``run-session --session-id
    ID``) and return its exit status, or None for click to handle the command line."""
    import gc

    if args[:1] == ["run-session"]:
        from ecc.cli import options

        runner = options.parse(options.RUN_SESSION, args[1:])
        if runner is None:
            return None  # --remote, --host, --help, usage errors: click's
        from ecc.sessions.runner import run_session

        status = run_session(runner["session_id"])
        gc.freeze()  # see below: the exit's full collection would only find module cycles
        return status
    params = parse_start(args) if args[:1] in (["run"], ["start"]) else None
    if params is None or not (_stream_ok(sys.stdout) and _stream_ok(sys.stderr)):
        return None
    # A process that lives a tenth of a second: collecting cycles during its imports is wasted
    # work, and so is the full collection at interpreter exit, which would walk every module's
    # objects (about 10 ms): freezing them first leaves that collection nothing to do.
    gc.disable()
    try:
        return _start(params)
    except BrokenPipeError:  # as click: the reader went away; end quietly with status 1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # for the exit's flush
        return 1
    finally:
        gc.freeze()


def _start(params: dict[str, Any]) -> int:
    from ecc.contract.errors import EccError

    try:
        _, session = start_session(
            params["task"],
            params["harness"],
            params["profile"],
            params["use_worktree"],
            params["name"],
            params["cwd"],
            params["executor"],
        )
        _echo(started_text(session, params["as_json"]), sys.stdout)
    except EccError as exc:
        from ecc.runtime.terminal import sanitize

        _echo(f"Error: {sanitize(exc.message)}", sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        _echo("\nAborted!", sys.stderr)
        return 1
    return 0
