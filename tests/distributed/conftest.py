"""A real worker pool for tests: PostgreSQL, Redis and ``ecc worker`` processes.

PostgreSQL and Redis are the session-wide throwaway servers of ``tests/servers.py``. Each module
gets a fresh store schema and two workers, ``w1`` and ``w2``, acting as two machines: each has its
own config, state, data (mirrors, worktrees) and cache dirs. The broker URL reaches them through
``executors.celery.broker_url_file`` (never argv). Teardown kills every worker by its process
group and every session group recorded in the store.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import tomli_w

from ecc.runtime.config import model as ecc_config
from ecc.sessions import executor as ecc_executor
from ecc.sessions import procs
from ecc.store.base import Store
from ecc.store.open import open_store
from tests.servers import PostgresServer, RedisServer

LEASE = 3.0


@dataclass
class Worker:
    name: str
    root: Path
    env: dict[str, str]
    proc: subprocess.Popen[bytes] | None = None
    log: Path = field(default=Path())

    @property
    def node(self) -> str:
        return f"{self.name}@{procs.hostname()}"

    def start(self, queue: str | None = None, concurrency: int = 2) -> Worker:
        self.log = self.root / "worker.log"
        args = [sys.executable, "-m", "ecc", "worker", "--name", self.name]
        args += ["--concurrency", str(concurrency)]
        if queue:
            args += ["--queue", queue]
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(
                args,
                env=self.env,
                cwd=self.root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        return self

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGQUIT)  # cold shutdown
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(OSError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes: the machine is gone."""
        assert self.proc is not None
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=10)


@dataclass
class Pool:
    store_url: str
    broker_url: str
    broker_file: Path
    root: Path
    workers: list[Worker] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)

    def worker(self, name: str) -> Worker:
        root = self.root / name
        env = dict(os.environ)
        for key in list(env):
            if key.startswith("ECC_") or key.startswith("XDG_"):
                del env[key]
        dirs = {
            "HOME": root / "home",
            "ECC_CONFIG_DIR": root / "config",
            "ECC_STATE_DIR": root / "state",
            "ECC_DATA_DIR": root / "data",
            "ECC_CACHE_DIR": root / "cache",
        }
        for key, path in dirs.items():
            path.mkdir(parents=True, exist_ok=True)
            env[key] = str(path)
        (dirs["ECC_CONFIG_DIR"] / "config.toml").write_text(tomli_w.dumps(self.config))
        env.update(
            GIT_AUTHOR_NAME="ecc worker",
            GIT_AUTHOR_EMAIL="worker@ecc.invalid",
            GIT_COMMITTER_NAME="ecc worker",
            GIT_COMMITTER_EMAIL="worker@ecc.invalid",
            GIT_CONFIG_NOSYSTEM="1",
        )
        worker = Worker(name, root, env)
        self.workers.append(worker)
        return worker

    def client_config(self, **extra: Any) -> dict[str, Any]:
        return {**self.config, "executor": "celery", **extra}

    def celery_app(self) -> Any:
        from celery import Celery

        app = Celery("ecc-test", broker=self.broker_url, set_as_current=False)
        app.conf.task_default_queue = "ecc.sessions"
        return app


def wait_ready(pool: Pool, workers: list[Worker], timeout: float = 60.0) -> None:
    app = pool.celery_app()
    wanted = {w.node for w in workers}
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            for w in workers:
                if w.proc is not None and w.proc.poll() is not None:
                    raise AssertionError(f"worker {w.name} exited: {w.log.read_text()[-3000:]}")
            replies = app.control.ping(destination=sorted(wanted), timeout=0.5) or []
            if {name for reply in replies for name in reply} >= wanted:
                return
        raise AssertionError("workers did not answer ping")
    finally:
        app.close()


def kill_sessions(store_url: str) -> None:
    store = open_store(store_url)
    try:
        rows = store._rows("SELECT harness_pgid FROM sessions WHERE harness_pgid IS NOT NULL")
    finally:
        store.close()
    for row in rows:
        with contextlib.suppress(OSError):
            os.killpg(row["harness_pgid"], signal.SIGKILL)


@pytest.fixture(scope="module")
def pool(
    postgres_server: PostgresServer, redis_server: RedisServer, tmp_path_factory: Any
) -> Iterator[Pool]:
    root = tmp_path_factory.mktemp("pool")
    store_url = postgres_server.new_schema()
    broker_file = root / "broker-url"
    broker_file.write_text(redis_server.url + "\n")
    broker_file.chmod(0o600)
    made = Pool(store_url, redis_server.url, broker_file, root)
    made.config = {
        "store": {"url": store_url},
        "executors": {"celery": {"broker_url_file": str(broker_file)}},
        "default_harness": "shell",
        "lease_seconds": LEASE,
        "stop_grace_secs": 1.0,
        "heartbeat_interval_secs": 0.5,
    }
    try:
        workers = [made.worker("w1").start(), made.worker("w2").start()]
        wait_ready(made, workers)
        yield made
    finally:
        for worker in made.workers:
            worker.stop()
        with contextlib.suppress(Exception):
            kill_sessions(store_url)
        postgres_server.drop_schema(store_url)


@pytest.fixture(autouse=True)
def client(pool: Pool, isolated_env: Path) -> Iterator[Pool]:
    """This test's machine is a client of the pool (the user config names store and broker)."""
    write_client_config(pool)
    yield pool
    ecc_executor.reset()


def write_client_config(pool: Pool, **extra: Any) -> None:
    path = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomli_w.dumps(pool.client_config(**extra)))
    ecc_config.reset()
    ecc_executor.reset()


@pytest.fixture
def store(pool: Pool) -> Iterator[Store]:
    opened = open_store(pool.store_url)
    yield opened
    opened.close()
