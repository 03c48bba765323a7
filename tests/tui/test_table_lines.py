"""The sessions table redraws a line whose only change is a plain cell's text of the same width
by putting the new text into the line it drew before: the result must be exactly the line
Textual would draw from scratch, and anything else is drawn from scratch."""

from __future__ import annotations

import asyncio
from typing import Any

from rich.text import Text
from textual import events
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


def _fresh_line_map(table: SessionsTable) -> list[tuple[Any, int]]:
    table._offset_cache.clear()
    return list(DataTable._y_offsets.fget(table))  # type: ignore[attr-defined]


def test_plain_updates_keep_the_line_map_and_other_changes_rebuild_it(monkeypatch) -> None:
    """Textual rebuilt its map of lines to rows (a walk of every row) after each cell update,
    so each age tick walked all the rows; a plain update moves no row, anything else may."""
    walks: list[int] = []
    line_map = DataTable._y_offsets

    def counted(table: DataTable) -> Any:
        walks.append(1)  # Textual's own map: walks the rows unless its counter stood still
        return line_map.fget(table)  # type: ignore[attr-defined]

    monkeypatch.setattr(DataTable, "_y_offsets", property(counted))

    async def scenario(table: SessionsTable, pilot: Any) -> None:
        _drawn(table)
        walks.clear()
        for number in range(12):
            table.update_cell(f"s{number:03d}", "age", Text(f"{number + 1}s"))
        await pilot.pause()
        drawn = _drawn(table)
        assert walks == []
        assert drawn == _from_scratch(table)
        table.add_row(*(Text(t) for t in ("s100", "queued", "new", "0s", "-")), key="s100")
        table.remove_row("s003")
        await pilot.pause()
        assert table._y_offsets == _fresh_line_map(table)
        assert [key.value for key, _ in table._y_offsets][-1] == "s100"
        assert "s003" not in [key.value for key, _ in table._y_offsets]
        table.update_cell("s005", "age", Text("9s"))
        table.sort("id", key=lambda cell: cell.plain, reverse=True)
        await pilot.pause()
        assert table._y_offsets == _fresh_line_map(table)
        assert table._y_offsets[0][0].value == "s100"
        assert _drawn(table) == _from_scratch(table)

    _run(scenario)


def test_a_plain_update_after_a_column_widened_is_put_at_the_new_place() -> None:
    async def scenario(table: SessionsTable, pilot: Any) -> None:
        _drawn(table)
        patched = table.patched_lines
        table.update_cell("s002", "age", Text("5s"))  # a refresh puts it in place...
        await pilot.pause()
        assert table.patched_lines > patched
        table.update_cell("s001", "task", Text("a much longer task than before"), update_width=True)
        await pilot.pause()  # ...then the task column widens, moving the age column right
        patched = table.patched_lines
        table.update_cell("s002", "age", Text("7s"))
        await pilot.pause()
        assert table.patched_lines > patched
        assert _drawn(table) == _from_scratch(table)

    _run(scenario)


def test_a_resize_keeps_the_drawn_lines_and_a_new_width_draws_them_anew() -> None:
    """Textual moves its update counter on each resize (one reaches the table just after its
    first draw); the drawn lines stay good for the size they were drawn at."""

    async def scenario(table: SessionsTable, pilot: Any) -> None:
        _drawn(table)
        table.post_message(events.Resize(table.size, table.virtual_size))
        await pilot.pause()
        patched = table.patched_lines
        table.update_cell("s002", "age", Text("7s"))
        await pilot.pause()
        assert table.patched_lines > patched
        assert _drawn(table) == _from_scratch(table)
        await pilot.resize_terminal(90, 16)
        await pilot.pause()
        assert table.size.width == 90
        table.update_cell("s003", "age", Text("8s"))
        await pilot.pause()
        assert _drawn(table) == _from_scratch(table)

    _run(scenario)
