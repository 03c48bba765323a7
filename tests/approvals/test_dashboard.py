"""The dashboard's approve (``a``) and deny (``x``) keys on the selected session's held call,
through Textual's Pilot, against a real ``ecc hook`` waiting in the background."""

from __future__ import annotations

import getpass
import json

from rich.text import Text
from textual.widgets import DataTable, Input

from ecc.runtime.config.model import get_config
from ecc.tui.app import DashboardApp
from ecc.tui.screens import ConfirmScreen, PromptScreen
from tests.approvals.conftest import ENFORCE, approvals, claude_call, make_session, wait_pending
from tests.tui.conftest import drive, wait_for


def _cell(app: DashboardApp, session_id: str, column: str) -> str:
    cell = app.query_one("#sessions", DataTable).get_cell(session_id, column)
    return cell.plain if isinstance(cell, Text) else str(cell)


def _footer_keys(app: DashboardApp) -> set[str]:
    return {binding.key for (_, binding, enabled, _) in app.active_bindings.values() if enabled}


def test_approve_and_deny_keys_answer_the_held_call(held) -> None:
    session = make_session()
    env = {**ENFORCE, "ECC_SESSION_ID": session}
    first = held("claude", claude_call(), env)
    pending = wait_pending(first)
    app = DashboardApp(config=get_config(), interval=0.1)
    user = getpass.getuser()

    async def scenario(pilot) -> None:
        await wait_for(pilot, lambda: app.selected == session, "the session selected")
        await wait_for(pilot, lambda: _cell(app, session, "state") == "waiting", "waiting")
        assert {"a", "x"} <= _footer_keys(app)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("n")  # cancelled: still held
        await pilot.pause(0.3)
        assert first.proc.poll() is None
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen), "confirmation")
        await pilot.press("y")
        await wait_for(pilot, lambda: first.proc.poll() is not None, "the hook answered")
        await wait_for(pilot, lambda: _cell(app, session, "state") == "running", "running again")
        assert not {"a", "x"} & _footer_keys(app)

        second = held("claude", claude_call(), env)
        await wait_for(pilot, lambda: _cell(app, session, "state") == "waiting", "waiting again")
        await pilot.press("x")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the reason prompt")
        app.screen.query_one(Input).value = "use make clean"
        await pilot.press("enter")
        await wait_for(pilot, lambda: second.proc.poll() is not None, "the hook answered")
        code, _, err = second.finish()
        assert code == 2 and "use make clean" in err and f"dashboard:{user}" in err

    drive(app, scenario)
    code, out, _ = first.finish()
    assert code == 0 and json.loads(out)["hookSpecificOutput"]["permissionDecision"] == "allow"
    decided = approvals("--all")
    assert [(a["decision"], a["decided_by"]) for a in decided] == [
        ("allow", f"dashboard:{user}"),
        ("deny", f"dashboard:{user}"),
    ]
    assert decided[0]["id"] == pending["id"]
