"""Where a session runs: the one seam between "a session should run now" and a process.

Everything else in ecc (CLI, manager, daemon) talks to an :class:`Executor` and to the store;
nothing else assumes the harness is a child of this machine. An executor:

* ``submit(session)`` starts the session somewhere and returns at once. The runner it starts
  reads the session spec from the store (never from argv), claims it at most once, and reports
  lines, state and exit back through the store;
* ``interrupt(session)`` is a best-effort fast path for stop (the store's ``stop_requested`` flag
  is the truth; a runner also polls it at every heartbeat);
* ``is_local(session)`` says whether pid checks on this machine mean anything for the session;
  otherwise liveness is judged by the heartbeat lease alone.

``local`` (the default) re-executes ``python -m ecc run-session --session-id ID`` as a detached
process (new process session, stdin/stdout on /dev/null, stderr appended to
``<state dir>/logs/<id>.runner.log``). A Celery, Ray or Slurm executor submits the same
``run-session`` command to its workers (issue 11).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ecc.errors import EccError
from ecc.sessions import procs

if TYPE_CHECKING:
    from ecc.sessions.models import Session


class Executor(Protocol):
    name: str

    def submit(self, session: Session) -> None: ...

    def interrupt(self, session: Session) -> bool: ...

    def is_local(self, session: Session) -> bool: ...


def runner_log_path(session_id: str) -> Path:
    from ecc import paths

    return paths.ensure_private_dir(paths.state_dir() / "logs") / f"{session_id}.runner.log"


def runner_argv(session_id: str) -> list[str]:
    """The command every executor runs for a session (CLI overrides travel with it)."""
    from ecc import config

    argv = [sys.executable, "-m", "ecc"]
    for override in config._overrides:
        argv += ["-c", override]
    return [*argv, "run-session", "--session-id", session_id]


class LocalExecutor:
    """A detached runner process on this machine."""

    name = "local"

    def submit(self, session: Session) -> None:
        log = os.open(runner_log_path(session.id), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        cwd = session.project_dir if os.path.isdir(session.project_dir) else None
        try:
            subprocess.Popen(
                runner_argv(session.id),
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise EccError(f"cannot start the session runner: {exc}") from exc
        finally:
            os.close(log)

    def is_local(self, session: Session) -> bool:
        return session.runner_host in (None, procs.hostname())

    def interrupt(self, session: Session) -> bool:
        if not self.is_local(session) or not procs.alive(session.runner_pid, session.runner_token):
            return False
        try:
            os.kill(session.runner_pid, signal.SIGTERM)  # type: ignore[arg-type]
        except OSError:
            return False
        return True


_EXECUTORS: dict[str, type] = {"local": LocalExecutor}


def get_executor(name: str | None = None) -> Executor:
    """The executor called ``name`` (default ``local``); later versions load them as plugins."""
    key = name or "local"
    try:
        return _EXECUTORS[key]()  # type: ignore[no-any-return]
    except KeyError:
        raise EccError(f"unknown executor {key!r} (known: {', '.join(_EXECUTORS)})") from None
