"""A group of sessions in the dashboard: one row that Enter opens into its members."""

from __future__ import annotations

import json
from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable

from ecc.tui.app import DashboardApp
from tests.conftest import run_ecc
from tests.tui.conftest import drive, wait_for


def _rows(app: DashboardApp) -> list[str]:
    return [key.value for key in app.query_one("#sessions", DataTable).rows]


def _cell(app: DashboardApp, key: str, column: str) -> str:
    cell = app.query_one("#sessions", DataTable).get_cell(key, column)
    return cell.plain if isinstance(cell, Text) else str(cell)


def test_a_group_is_one_row_that_opens_into_its_members(sessions, git_repo: Path) -> None:
    ran = run_ecc("run", "--harness", "shell,shell", "--count", "3", "echo take", cwd=git_repo)
    assert ran.returncode == 0, ran.stderr
    group = json.loads(run_ecc("groups", "--json", cwd=git_repo).stdout)[0]
    members = [m["session_id"] for m in group["members"]]
    alone = sessions.start("echo alone")
    sessions.wait(alone.id)
    key = f"group:{group['id']}"
    app = DashboardApp(interval=0.2)

    async def scenario(pilot):
        await wait_for(pilot, lambda: set(_rows(app)) == {key, alone.id}, "one group row")
        assert _cell(app, key, "id") == f"▸ {group['id']}"
        assert _cell(app, key, "state") == "completed"
        assert _cell(app, key, "task").startswith("group of 3: echo take")
        assert _cell(app, key, "worktree") == "3 worktrees"
        table = app.query_one("#sessions", DataTable)
        table.focus()
        table.move_cursor(row=_rows(app).index(key))
        await wait_for(pilot, lambda: app.selected is None, "no session selected")
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(_rows(app)) == 5, "the members' rows")
        rows = _rows(app)
        assert rows[rows.index(key) + 1 : rows.index(key) + 4] == members  # oldest first
        assert _cell(app, key, "id") == f"▾ {group['id']}"
        assert rows[table.cursor_row] == key  # the cursor stays on the group
        table.move_cursor(row=rows.index(members[1]))
        await wait_for(pilot, lambda: app.selected == members[1], "a member selected")
        table.move_cursor(row=rows.index(key))
        await pilot.press("enter")
        await wait_for(pilot, lambda: set(_rows(app)) == {key, alone.id}, "closed again")

    drive(app, scenario)
