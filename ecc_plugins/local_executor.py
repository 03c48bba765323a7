"""The built-in ``local`` executor: a detached runner process on this machine (the default)."""

from __future__ import annotations

import os
import signal
import subprocess
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.sessions import procs
from ecc.sessions.executor import runner_argv, runner_log_path

if TYPE_CHECKING:
    from ecc.store.models import Session


class LocalExecutor:
    """``python -m ecc run-session --session-id ID`` in a new process session, detached."""

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
        return procs.signal_process(session.runner_pid, signal.SIGTERM)


_executor = LocalExecutor()


@hookimpl
def ecc_executor(name: str, config: Any) -> LocalExecutor | None:
    return _executor if name == "local" else None
