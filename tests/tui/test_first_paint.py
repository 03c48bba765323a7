"""The dashboard's first paint: the sessions table is drawn focused, and the footer with its keys,
from the first frame.

Textual's auto focus looks for a widget to focus before the table is mounted in its container
and finds none; the table was then focused by ``focus()``, which waits for a later frame, so
every row on screen was drawn unfocused and then again focused before the first idle."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from textual.widgets._footer import FooterKey

from ecc.tui.app import DashboardApp
from ecc.tui.table import SessionsTable
from tests.tui.conftest import drive


def test_the_sessions_table_is_focused_from_its_first_draw(sessions, monkeypatch) -> None:
    for number in range(30):
        sessions.create(f"task {number}")
    focused_at_draw: list[bool] = []
    original = SessionsTable.render_lines

    def recording(table: SessionsTable, crop: Any) -> Any:
        focused_at_draw.append(table.has_focus)
        return original(table, crop)

    monkeypatch.setattr(SessionsTable, "render_lines", recording)
    app = DashboardApp(interval=0.1)

    async def scenario(pilot: Any) -> None:
        table = app.query_one("#sessions", SessionsTable)
        assert table.row_count == 30
        assert app.focused is table
        assert focused_at_draw and all(focused_at_draw), focused_at_draw
        await pilot.press("down")  # the keys still reach it
        await pilot.pause()
        assert table.cursor_row == 1

    drive(app, scenario)


def test_the_footer_shows_its_keys_in_the_first_frame(sessions, monkeypatch) -> None:
    """Textual's footer built its keys only after the first refresh, a second layout of the
    whole screen before the first idle."""
    sessions.create("a task")
    keys_at_draw: list[list[str]] = []
    original = SessionsTable.render_lines

    def recording(table: SessionsTable, crop: Any) -> Any:
        keys_at_draw.append([key.description for key in table.app.query(FooterKey)])
        return original(table, crop)

    monkeypatch.setattr(SessionsTable, "render_lines", recording)
    app = DashboardApp(interval=0.1)

    async def scenario(pilot: Any) -> None:
        assert keys_at_draw
        assert "Quit" in keys_at_draw[0] and "New" in keys_at_draw[0]
        assert "Approve" not in keys_at_draw[0]  # shown only while the selection waits
        assert keys_at_draw[-1] == keys_at_draw[0]

    drive(app, scenario)


def test_the_dialogs_module_is_imported_when_a_dialog_first_opens() -> None:
    """Nothing on the way to the first paint needs the dialogs (new session, prompts, confirm):
    their module (and Textual's widgets it alone uses) is imported when one first opens."""
    code = "import sys, ecc.tui.app; print('ecc.tui.screens' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
