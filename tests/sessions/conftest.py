"""Session test fixtures: fast heartbeats, real processes, and no process left behind.

Every test here runs twice: against the embedded SQLite store and against a real PostgreSQL
server (``store.url = "postgresql://…"``, one fresh schema per test), so the same session-level
suite proves both stores.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ecc.runtime.config import model as ecc_config
from ecc.store.base import Store
from ecc.store.open import open_store
from tests.conftest import run_ecc
from tests.servers import PostgresServer

STORE_KINDS = ["sqlite", "postgresql"]
_store_url: dict[str, str | None] = {"url": None}

FAST = {
    "heartbeat_interval_secs": 0.2,
    "stop_grace_secs": 1.0,
    "default_harness": "shell",
}


def write_config(home: Path, **values: Any) -> None:
    """Write the user config file (the layer every ecc subprocess reads)."""
    import tomli_w

    path = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {**FAST, **values}
    if _store_url["url"]:
        data.setdefault("store", {})["url"] = _store_url["url"]
    path.write_text(tomli_w.dumps(data))
    ecc_config.reset()


def store_target() -> Path | str:
    """What ``open_store()`` opens for this test: the SQLite file or the PostgreSQL URL."""
    return _store_url["url"] or Path(os.environ["ECC_STATE_DIR"]) / "ecc.db"


@pytest.fixture(params=STORE_KINDS)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def session_env(
    isolated_env: Path, store_kind: str, request: pytest.FixtureRequest
) -> Iterator[Path]:
    server: PostgresServer | None = None
    if store_kind == "postgresql":
        server = request.getfixturevalue("postgres_server")
        _store_url["url"] = server.new_schema()
    write_config(isolated_env)
    try:
        yield isolated_env
    finally:
        _kill_everything()
        if server is not None:
            server.drop_schema(str(_store_url["url"]))
        _store_url["url"] = None


def _kill_everything() -> None:
    target = store_target()
    if isinstance(target, Path) and not target.exists():
        return
    store = open_store(target)
    try:
        rows = store._rows("SELECT runner_pid, harness_pgid FROM sessions")
    finally:
        store.close()
    for row in rows:
        for pgid in (row["harness_pgid"], row["runner_pid"]):
            if pgid:
                with contextlib.suppress(OSError):
                    os.killpg(pgid, signal.SIGKILL)


@pytest.fixture
def store() -> Iterator[Store]:
    opened = open_store(store_target())
    yield opened
    opened.close()


def ecc_json(*args: str, cwd: Path | None = None) -> Any:
    result = run_ecc(*args, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def start(task: str, cwd: Path, *extra: str) -> str:
    return ecc_json("start", *extra, task, cwd=cwd)["id"]


def wait_until(predicate: Any, timeout: float = 30.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def wait_state(store: Store, session_id: str, *states: str, timeout: float = 30.0) -> Any:
    def check() -> Any:
        session = store.get_session(session_id)
        return session if session is not None and session.state.value in states else None

    return wait_until(check, timeout, f"session {session_id} to be {'/'.join(states)}")
