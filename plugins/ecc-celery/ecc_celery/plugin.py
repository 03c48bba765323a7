"""The ``celery`` executor and the ``ecc worker`` command (entry point ``ecc.executors:celery``).

Importing this module imports neither Celery nor psycopg: ecc loads every executor plugin on
every command that touches sessions, so Celery is imported only when a session is submitted or
stopped through it, or when ``ecc worker`` runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ecc.contract.hookspecs import hookimpl

if TYPE_CHECKING:
    import click

    from ecc.store.models import Session
    from ecc_celery.settings import CelerySettings


class CeleryExecutor:
    """Places sessions on a Celery worker pool; PostgreSQL (the ecc store) stays the truth."""

    name = "celery"
    remote = True  # pids mean nothing here; the lease judges liveness; worktrees come from remotes

    def __init__(self, settings: CelerySettings) -> None:
        self.settings = settings
        self._app: Any = None

    @property
    def app(self) -> Any:
        if self._app is None:
            from ecc_celery.app import make_app

            self._app = make_app(self.settings)
        return self._app

    def submit(self, session: Session) -> None:
        from ecc.contract.errors import EccError

        try:
            self.app.send_task(
                "ecc.run_session",
                args=[session.id],
                task_id=session.id,  # one id everywhere: revoke and logs name the session
                queue=self.settings.queue,
                retry=True,
                retry_policy={"max_retries": 3, "interval_start": 0.2, "interval_step": 0.5},
            )
        except Exception as exc:  # kombu raises OperationalError and friends
            raise EccError(f"cannot submit the session to the Celery broker: {exc}") from exc

    def interrupt(self, session: Session) -> bool:
        """Celery's native cancel: SIGTERM to the pool child running the session (the runner
        stops the group); also marks the id revoked should the message not be delivered yet."""
        try:
            self.app.control.revoke(session.id, terminate=True, signal="SIGTERM")
        except Exception:
            return False  # the store flag still stops it at the next heartbeat
        return True

    def is_local(self, session: Session) -> bool:
        return False


# settings -> executor: one Celery app per broker and queue. Keyed by what the settings say,
# not by the config object's id(), which a later config may reuse once the first is collected.
_executors: dict[CelerySettings, CeleryExecutor] = {}


@hookimpl
def ecc_executor(name: str, config: Any) -> CeleryExecutor | None:
    if name != "celery":
        return None
    from ecc_celery.settings import CelerySettings

    settings = CelerySettings.from_config(config)
    if settings not in _executors:
        _executors[settings] = CeleryExecutor(settings)
    return _executors[settings]


@hookimpl
def ecc_register_commands(cli: click.Group) -> None:
    from ecc_celery.worker import worker_command

    cli.add_command(worker_command, "worker")
