"""Fixtures for the dashboard tests: a real store, real shell sessions, and a Pilot driver."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ecc.runtime.config.model import get_config
from ecc.sessions import manager
from ecc.store.base import Store
from ecc.store.models import Session
from ecc.store.open import open_store

WAIT_SECS = 60.0  # a bound for a loaded machine, never an assertion on time


class Sessions:
    """Starts real shell sessions through the manager (as ``ecc start`` does) and cleans up."""

    def __init__(self, store: Store, default_cwd: Path) -> None:
        self.store = store
        self.config = get_config()
        self.default_cwd = default_cwd

    def create(self, task: str, *, cwd: Path | None = None, worktree: bool = False) -> Session:
        request = manager.Request(
            task=task, harness="shell", use_worktree=worktree, cwd=cwd or self.default_cwd
        )
        return manager.create(self.store, request, self.config)

    def start(self, task: str, *, cwd: Path | None = None, worktree: bool = False) -> Session:
        session = self.create(task, cwd=cwd, worktree=worktree)
        manager.submit(self.store, session)
        return session

    def wait(self, session_id: str, state: str | None = None) -> Session:
        """Wait until the session is terminal (or in ``state``); fail the test if it never is."""
        import time

        deadline = time.monotonic() + WAIT_SECS
        while time.monotonic() < deadline:
            current = self.store.get_session(session_id)
            assert current is not None
            if (state and current.state.value == state) or (not state and current.terminal):
                return current
            time.sleep(0.05)
        raise AssertionError(f"session {session_id} never reached {state or 'a final state'}")

    def cleanup(self) -> None:
        for session in self.store.list_sessions():
            if session.active:
                try:
                    manager.stop(self.store, session, self.config, grace=0.5, wait=5)
                except Exception:
                    pass
            current = self.store.get_session(session.id)
            if current and current.harness_pgid:
                try:
                    os.killpg(current.harness_pgid, signal.SIGKILL)
                except OSError:
                    pass


@pytest.fixture
def store(isolated_env: Path) -> Iterator[Store]:
    opened = open_store()
    yield opened
    opened.close()


@pytest.fixture
def sessions(store: Store, tmp_path: Path) -> Iterator[Sessions]:
    work = tmp_path / "work"
    work.mkdir()
    helper = Sessions(store, work)
    yield helper
    helper.cleanup()


async def wait_for(pilot: Any, condition: Callable[[], Any], what: str) -> Any:
    """Let the app run until ``condition()`` is truthy; fail the test (not on time) otherwise."""
    import time

    deadline = time.monotonic() + WAIT_SECS
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        await pilot.pause(0.05)
    messages = getattr(pilot.app, "messages", [])
    raise AssertionError(f"the dashboard never showed: {what} (its messages: {messages})")


async def select(pilot: Any, app: Any, session_id: str) -> None:
    """Move the sessions table's cursor to ``session_id``'s row, once it is shown."""
    from textual.widgets import DataTable

    table = app.query_one("#sessions", DataTable)
    await wait_for(pilot, lambda: session_id in [k.value for k in table.rows], session_id)
    table.focus()
    table.move_cursor(row=[k.value for k in table.rows].index(session_id))
    await wait_for(pilot, lambda: app.selected == session_id, f"{session_id} selected")


def drive(app: Any, scenario: Callable[[Any], Awaitable[None]], size=(140, 40)) -> None:
    """Run ``scenario(pilot)`` against ``app`` in Textual's headless driver."""

    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await scenario(pilot)
            await app.workers.wait_for_complete()

    asyncio.run(main())
