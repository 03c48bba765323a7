"""The dashboard's resolve key: two real shell sessions in worktrees change the same file, a real
conflicts pass (what the daemon runs) pauses the later one, and ``c`` on it, confirmed, closes
the incident and runs it again, as ``ecc conflicts resolve`` does."""

from __future__ import annotations

import time
from pathlib import Path

from ecc.sessions import conflicts
from ecc.tui.app import DashboardApp
from ecc.tui.screens import ConfirmScreen
from tests.conftest import git
from tests.tui.conftest import drive, select, wait_for

WRITES = "printf '%s\\n' {text} > shared.txt && sleep 60"


def writer(sessions, repo: Path, text: str):
    session = sessions.start(WRITES.format(text=text), cwd=repo, worktree=True)
    running = sessions.wait(session.id, "running")

    def written() -> bool:
        current = sessions.store.get_session(session.id)
        target = Path(current.worktree_path or running.working_dir) / "shared.txt"
        return target.is_file() and target.read_text().strip() == text

    for _ in range(400):
        if written():
            return session
        time.sleep(0.05)
    raise AssertionError(f"session {session.id} never wrote shared.txt")


def test_the_resolve_key_runs_the_paused_session_again(sessions, git_repo: Path) -> None:
    (git_repo / "shared.txt").write_text("base\n")
    git(git_repo, "add", "shared.txt")
    git(git_repo, "commit", "-q", "-m", "shared")
    plain = sessions.start("echo unrelated")
    first = writer(sessions, git_repo, "first")
    second = writer(sessions, git_repo, "second")
    [acted] = conflicts.check(sessions.store, sessions.config)
    assert (acted["paused"], acted["kept"]) == (second.id, first.id)
    paused = sessions.wait(second.id, "stopped")
    assert paused.open_conflict is not None
    sessions.wait(plain.id)
    app = DashboardApp(interval=0.2)

    async def scenario(pilot) -> None:
        await select(pilot, app, plain.id)  # part of no conflict: no key
        assert not app.check_action("resolve_conflict", ())
        await pilot.press("c")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, ConfirmScreen)
        await select(pilot, app, second.id)
        await wait_for(pilot, lambda: app.check_action("resolve_conflict", ()), "the key")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("n")  # not now: still paused
        await wait_for(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "it closed")
        await pilot.pause(0.3)
        assert sessions.store.get_session(second.id).state.value == "stopped"
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the question")
        await pilot.press("y")
        await wait_for(
            pilot,
            lambda: sessions.store.get_session(second.id).state.value == "running",
            "the paused session to run again",
        )
        incident = sessions.store.get_conflict(paused.open_conflict)
        assert incident["status"] == "resolved"
        expected = f"Conflict {incident['id']} resolved; session {second.id} resumed"
        await wait_for(pilot, lambda: any(expected in m for m in app.messages), expected)

    drive(app, scenario)
