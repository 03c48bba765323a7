"""The sessions table redraws a line whose only change is a plain cell's text of the same width
by putting the new text into the line it drew before: the result must be exactly the line
Textual would draw from scratch, and anything else is drawn from scratch."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual.app import App, ComposeResult
from textual.widgets import DataTable

from ecc.tui.table import SessionsTable

COLUMNS = ("id", "state", "task", "age", "risk")


class TableApp(App[None]):
    def compose(self) -> ComposeResult:
        yield SessionsTable(id="sessions", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        table = self.query_one(SessionsTable)
        for key in COLUMNS:
            table.add_column(key.title(), key=key)
        for number in range(12):
            table.add_row(
                Text(f"s{number:03d}"),
                Text("running", "bold green"),
                Text(f"task number {number}"),
                Text(f"{number}s"),
                Text("-", "dim"),
                key=f"s{number:03d}",
            )


def _drawn(table: SessionsTable) -> list[list[tuple[str, Any]]]:
    """Every line on screen as this table draws it now."""
    return [
        [(segment.text, segment.style) for segment in table.render_line(y)]
        for y in range(table.size.height)
    ]


def _from_scratch(table: SessionsTable) -> list[list[tuple[str, Any]]]:
    """Every line on screen as Textual's own DataTable draws it, with no cache at all."""
    table._clear_caches()
    lines = []
    for y in range(table.size.height):
        width, _ = table.size
        scroll_x, scroll_y = table.scroll_offset
        row_y = y + scroll_y if y >= table.header_height else y
        strip = DataTable._render_line(table, row_y, scroll_x, scroll_x + width, table.rich_style)
        lines.append([(segment.text, segment.style) for segment in strip])
    return lines


def _run(scenario: Any) -> None:
    async def main() -> None:
        app = TableApp()
        async with app.run_test(size=(100, 16)) as pilot:
            await pilot.pause()
            await scenario(app.query_one(SessionsTable), pilot)

    asyncio.run(main())


def test_a_same_width_text_change_is_put_into_the_drawn_line_exactly() -> None:
    async def scenario(table: SessionsTable, pilot: Any) -> None:
        _drawn(table)
        patched = table.patched_lines
        for number in range(12):  # every age moves on, keeping its width
            age = f"{number + 1}s" if number < 9 else f"{number - 8}m"
            table.update_cell(f"s{number:03d}", "age", Text(age))
        await pilot.pause()
        drawn = _drawn(table)
        assert table.patched_lines > patched
        assert any("3m" in text for line in drawn for text, _ in line)
        assert drawn == _from_scratch(table)

    _run(scenario)


def test_other_changes_are_drawn_from_scratch_and_still_exactly() -> None:
    async def scenario(table: SessionsTable, pilot: Any) -> None:
        _drawn(table)
        patched = table.patched_lines
        table.update_cell("s001", "age", Text("100s"))  # wider
        table.update_cell("s002", "age", Text("2s", "bold"))  # another style
        table.update_cell("s003", "risk", Text("0.92 · 3 calls", "bold red"))
        await pilot.pause()
        drawn = _drawn(table)
        assert drawn == _from_scratch(table)
        assert table.patched_lines == patched  # none of those could be put in place
        table.move_cursor(row=4)
        await pilot.pause()
        table.update_cell("s004", "age", Text("5s"))  # the cursor's row keeps its style
        await pilot.pause()
        assert _drawn(table) == _from_scratch(table)

    _run(scenario)


def test_a_refresh_draws_a_scrolled_table_as_textual_does() -> None:
    async def main() -> None:
        app = TableApp()
        async with app.run_test(size=(100, 8)) as pilot:
            await pilot.pause()
            table = app.query_one(SessionsTable)
            table.scroll_to(y=3, animate=False)
            await pilot.pause()
            assert table.scroll_offset.y == 3
            table._refresh_style = table.rich_style  # as while render_lines runs
            ours = [list(table.render_line(y)) for y in range(table.size.height)]
            table._refresh_style = None
            table._clear_caches()
            theirs = [list(DataTable.render_line(table, y)) for y in range(table.size.height)]
            assert ours == theirs

    asyncio.run(main())
