"""Session test fixtures: fast heartbeats, real processes, and no process left behind."""

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

from ecc import config as ecc_config
from ecc.sessions.store import Store
from tests.conftest import run_ecc

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
    path.write_text(tomli_w.dumps({**FAST, **values}))
    ecc_config.reset()


@pytest.fixture(autouse=True)
def session_env(isolated_env: Path) -> Iterator[Path]:
    write_config(isolated_env)
    yield isolated_env
    _kill_everything()


def _kill_everything() -> None:
    db = Path(os.environ["ECC_STATE_DIR"]) / "ecc.db"
    if not db.exists():
        return
    store = Store(db)
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
    db = Path(os.environ["ECC_STATE_DIR"]) / "ecc.db"
    opened = Store(db)
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
