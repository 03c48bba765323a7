"""Young sessions' ages: a second's tick redraws only the age cells on screen, and a row
scrolled into view shows its current age by the next tick."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from textual.widgets import DataTable

from ecc.tui import data
from ecc.tui.app import DashboardApp
from ecc.tui.table import SessionsTable
from tests.tui.conftest import drive

SESSIONS = 80


class Clock:
    def __init__(self) -> None:
        self.now = data.wall_clock()

    def __call__(self) -> Any:
        return self.now


def _age_cells(table: DataTable) -> dict[str, str]:
    return {str(key.value): table.get_cell(key, "age").plain for key in table.rows}


def test_a_tick_updates_only_the_age_cells_on_screen_and_scrolled_rows_catch_up(sessions):
    for number in range(SESSIONS):
        sessions.create(f"task {number}")
    clock = Clock()
    app = DashboardApp(interval=3600, clock=clock)  # ticks are driven by the test

    async def scenario(pilot: Any) -> None:
        table = app.query_one("#sessions", DataTable)
        assert table.row_count == SESSIONS
        updated: list[str] = []
        original = table.update_cell

        def counting(row_key: Any, column_key: Any, value: Any, **kw: Any) -> None:
            updated.append(str(column_key))
            original(row_key, column_key, value, **kw)

        table.update_cell = counting  # type: ignore[method-assign]
        clock.now += timedelta(seconds=5)
        app.refresh_now()  # one poll at this interval is past the age refresh
        await pilot.pause()
        shown = table.size.height
        assert 0 < updated.count("age") <= shown, (updated.count("age"), shown)
        newest = app._row_order[0]
        created = data.parse_iso(sessions.store.get_session(newest).created_at)
        assert table.get_cell(newest, "age").plain == data.fmt_age(
            (clock.now - created).total_seconds()
        )
        table.scroll_end(animate=False)
        await pilot.pause()
        clock.now += timedelta(seconds=5)
        app.refresh_now()
        await pilot.pause()
        oldest = app._row_order[-1]
        created = data.parse_iso(sessions.store.get_session(oldest).created_at)
        assert table.get_cell(oldest, "age").plain == data.fmt_age(
            (clock.now - created).total_seconds()
        )

    drive(app, scenario)


def test_an_age_tick_re_renders_only_the_age_cells(sessions, monkeypatch):
    for number in range(30):
        sessions.create(f"task {number}")
    clock = Clock()
    app = DashboardApp(interval=3600, clock=clock)
    rendered: list[str] = []
    original = DataTable._render_cell

    def counting(self: DataTable, row_index: int, column_index: int, *args: Any, **kw: Any) -> Any:
        if row_index >= 0 and self.id == "sessions":
            rendered.append(str(self.ordered_columns[column_index].key.value))
        return original(self, row_index, column_index, *args, **kw)

    monkeypatch.setattr(DataTable, "_render_cell", counting)

    async def scenario(pilot: Any) -> None:
        await pilot.pause()
        table = app.query_one("#sessions", SessionsTable)
        rendered.clear()
        patched = table.patched_lines
        clock.now += timedelta(seconds=5)
        app.refresh_now()
        await pilot.pause()
        await pilot.pause()
        # an age of the same width is put into the line drawn before (ecc.tui.table); any
        # other is rendered as a cell: nothing else is drawn again
        assert "age" in rendered or table.patched_lines > patched
        assert set(rendered) <= {"age"}, sorted(set(rendered))
        newest = app._row_order[0]
        shown = "".join(segment.text for segment in table.render_line(1))
        assert f" {table.get_cell(newest, 'age').plain} " in shown

    drive(app, scenario)
