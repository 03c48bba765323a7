"""Helpers for the approval tests: a real session row, a real ``ecc hook`` held in the
background, and ``ecc approvals`` polled until the held call shows."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ecc.store.models import State
from ecc.store.open import default_path, open_store
from tests.conftest import ECC, run_ecc

ENFORCE = {"ECC__RISK__ENFORCE": "true"}
WAIT_SECS = 60.0  # a bound for a loaded machine, never an assertion on time
CONFIRM = "rm -rf node_modules"  # scores require_confirmation (0.65) with the heuristic


def claude_call(command: str = CONFIRM) -> dict[str, Any]:
    return {
        "session_id": "claude-1",
        "cwd": "/work/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command, "description": "clean"},
        "tool_use_id": "toolu_01",
    }


def codex_call(command: str = "git reset --hard HEAD~1") -> dict[str, Any]:
    return {
        "session_id": "codex-1",
        "cwd": "/work/project",
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": command},
        "tool_use_id": "call_1",
    }


def make_session(session_id: str = "5e5510a0b1c2", store_path: Path | None = None) -> str:
    """A running session row, as its runner would have left it."""
    with open_store(store_path or default_path()) as store:
        store.insert_session(
            session_id,
            task="clean the build",
            harness="claude",
            state=State.RUNNING,
            reason="test",
            project_dir="/tmp",
            working_dir="/tmp",
        )
    return session_id


class HeldHook:
    """``ecc hook`` in the background with a payload on stdin; :meth:`finish` collects it."""

    def __init__(self, harness: str, payload: dict[str, Any], env: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            [*ECC, "hook", "--harness", harness],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(payload))
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() must not flush it again

    def finish(self) -> tuple[int, str, str]:
        try:
            out, err = self.proc.communicate(timeout=WAIT_SECS)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"ecc hook never answered: {err}") from None
        return self.proc.returncode, out, err

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


@pytest.fixture
def held() -> Iterator[Any]:
    started: list[HeldHook] = []

    def start(harness: str, payload: dict[str, Any], env: dict[str, str]) -> HeldHook:
        hook = HeldHook(harness, payload, env)
        started.append(hook)
        return hook

    yield start
    for hook in started:
        hook.kill()


def approvals(*args: str, env: dict[str, str] | None = None) -> list[dict[str, Any]]:
    done = run_ecc("approvals", "--json", *args, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def wait_pending(hook: HeldHook | None = None, env: dict[str, str] | None = None) -> dict:
    """The one pending approval, once ``ecc approvals`` shows it."""
    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        pending = approvals(env=env)
        if pending:
            assert len(pending) == 1, pending
            return pending[0]
        if hook is not None and hook.proc.poll() is not None:
            raise AssertionError(f"ecc hook answered without holding: {hook.finish()}")
        time.sleep(0.1)
    raise AssertionError("no approval ever showed in ecc approvals")
