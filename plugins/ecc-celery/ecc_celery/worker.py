"""``ecc worker``: a Celery worker for ecc sessions on this machine.

Registered by the celery plugin through ``ecc_register_commands`` (the core never depends on
Celery). The broker comes from ``[executors.celery]`` or ``ECC_CELERY_BROKER_URL`` (never argv);
the store from ``store.url``. Each worker keeps its own repository mirrors and worktrees under
its data dir (``ECC_DATA_DIR``), so two workers on one host behave as two machines.
"""

from __future__ import annotations

import os

import click


@click.command("worker")
@click.option(
    "--queue",
    "queues",
    multiple=True,
    metavar="NAME",
    help="Queue to consume (repeatable; default: executors.celery.queue, ecc.sessions).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Sessions run at once on this machine (prefork processes; default: CPU count).",
)
@click.option("--name", metavar="NAME", help="Worker name (default: ecc@HOSTNAME).")
@click.option(
    "--loglevel",
    type=click.Choice(["DEBUG", "INFO", "WARNING", "ERROR"], case_sensitive=False),
    default="INFO",
    show_default=True,
)
def worker_command(
    queues: tuple[str, ...], concurrency: int | None, name: str | None, loglevel: str
) -> None:
    """Run ecc sessions submitted with --executor celery (a Celery worker, prefork, prefetch 1).

    Sessions are claimed at most once in the shared store; a worker SIGKILLed mid-session is
    noticed by the lease (lease_seconds) and its session failed, never re-run. Stop the worker
    with SIGTERM (warm: waits for running sessions) or SIGQUIT (cold).
    """
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions.procs import hostname
    from ecc.store.open import open_store
    from ecc_celery.app import make_app
    from ecc_celery.settings import CelerySettings

    config = fastconfig.view()  # validated; the same config type the sessions' runners read
    settings = CelerySettings.from_config(config)
    open_store(config=config).close()  # fail now, clearly, if the store is unreachable
    app = make_app(settings)
    node = name or "ecc"
    if "@" not in node:
        node = f"{node}@{hostname()}"
    argv = [
        "worker",
        "--pool=prefork",
        f"--concurrency={concurrency or os.cpu_count() or 1}",
        f"--hostname={node}",
        f"--queues={','.join(queues) or settings.queue}",
        "--prefetch-multiplier=1",
        "--without-mingle",
        "--without-gossip",
        f"--loglevel={loglevel.upper()}",
    ]
    app.worker_main(argv)
