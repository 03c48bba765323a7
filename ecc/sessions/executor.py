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

Executors are plugins (group ``ecc.executors``, hook ``ecc_executor``). ``local`` (the built-in
default, ``ecc_plugins.local_executor``) re-executes ``python -m ecc run-session --session-id ID``
as a detached process (new process session, stdin/stdout on /dev/null, stderr appended to
``<state dir>/logs/<id>.runner.log``). A remote executor (``celery``; later Ray or Slurm) places
:func:`ecc.sessions.runner.run_remote_session` on a worker machine instead. Every executor but
``local`` is judged by the heartbeat lease alone (``lease_seconds``).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.models import Session


class Executor(Protocol):
    """What the ``ecc_executor`` hook returns (see ``ecc.contract.hookspecs``)."""

    name: str

    def submit(self, session: Session) -> None: ...

    def interrupt(self, session: Session) -> bool: ...

    def is_local(self, session: Session) -> bool: ...


def runner_log_path(session_id: str) -> Path:
    from ecc.runtime import paths

    return paths.ensure_private_dir(paths.state_dir() / "logs") / f"{session_id}.runner.log"


def runner_argv(session_id: str) -> list[str]:
    """The command every executor runs for a session (CLI overrides travel with it)."""
    from ecc.runtime.config import overrides as cli_overrides

    argv = [sys.executable, "-m", "ecc"]
    for override in cli_overrides.pairs():
        argv += ["-c", override]
    return [*argv, "run-session", "--session-id", session_id]


_cache: dict[str, Executor] = {}


def get_executor(name: str | None = None, config: Config | None = None) -> Executor:
    """The executor called ``name`` (default ``local``), from the ``ecc_executor`` hook.

    Executors are plugins (entry-point group ``ecc.executors``): ``local`` is built in, ``celery``
    ships as the ``ecc-celery`` distribution. One object per name and process.
    """
    key = name or "local"
    cached = _cache.get(key)
    if cached is not None:
        return cached
    if config is None:  # the validated view: handing an executor its config needs no pydantic
        from ecc.runtime.config import view as fastconfig

        config = fastconfig.view()
    from ecc.runtime.plugins.loader import get_plugins

    plugins = get_plugins(config)
    executor = plugins.hook.ecc_executor(name=key, config=config)
    if executor is None:
        if key == "celery":  # the one executor ecc ships outside the core
            from ecc.runtime.extras import require_extra

            require_extra("celery", "executor 'celery'", "ecc_celery")
        known = sorted(r.name for r in plugins.records if r.group == "ecc.executors" and r.loaded)
        hint = f" (installed: {', '.join(known)})" if known else " (no executor plugin is loaded)"
        raise EccError(f"unknown executor {key!r}{hint}")
    _cache[key] = executor
    return executor


def reset() -> None:
    """Forget executor objects (tests that change config or plugins)."""
    _cache.clear()
