"""The sessions table: a ``DataTable`` whose cell updates redraw only what they change.

Textual's table keys every rendered cell and line on one counter that each ``update_cell``
bumps, so the age tick (a new age text in every young row on screen, each second) re-rendered
every cell of every line on screen: most of the dashboard's idle CPU with many young sessions.
This subclass keeps each rendered cell until its own value (by identity) or anything else that
shapes it (position, width, style, cursor, hover, a change other than a plain cell update)
changes; and a line whose only change is a plain text of the same width (``37s`` to ``38s``)
gets the new characters put into the line it drew before, which is exactly the line Textual
would draw (same segments and styles); any other change draws the line as Textual does.

Textual also rebuilds its map of screen lines to rows (a walk of every row) whenever that
counter moves, so each age tick walked all 500 rows again: the map is kept here until rows,
columns or dimensions change, as a plain cell update moves no row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.cache import LRUCache
from textual.strip import Strip
from textual.widgets import DataTable

if TYPE_CHECKING:
    from rich.style import Style
    from textual.geometry import Region
    from textual.widgets.data_table import ColumnKey, RowKey

CELLS_KEPT = 10_000
LINES_KEPT = 2_000


def _same_shape(old: Any, new: Any) -> bool:
    """Whether ``new`` renders as ``old`` does but for its characters: plain one-line ASCII
    ``Text`` of the same length, style and layout (no spans, no wide or control characters)."""
    return (
        type(old) is Text
        and type(new) is Text
        and not old.spans
        and not new.spans
        and len(old.plain) == len(new.plain) > 0
        and old.plain.isascii()
        and new.plain.isascii()
        and old.plain.isprintable()
        and new.plain.isprintable()
        and old.style == new.style
        and old.justify in (None, "left", "default")
        and new.justify == old.justify
        and new.overflow == old.overflow
        and new.no_wrap == old.no_wrap
    )


def _put(segments: list[Segment], x: int, old: str, new: str) -> bool:
    """Replace ``old`` at cell ``x`` of ``segments`` by ``new`` (same length) in place; False
    when ``old`` is not there whole, inside one ASCII segment."""
    position = 0
    for index, segment in enumerate(segments):
        length = segment.cell_length
        if position <= x and x + len(old) <= position + length:
            text = segment.text
            offset = x - position
            if segment.control or not text.isascii() or text[offset : offset + len(old)] != old:
                return False
            text = text[:offset] + new + text[offset + len(old) :]
            segments[index] = Segment(text, segment.style, segment.control)
            return True
        position += length
        if position > x:
            return False
    return False


class SessionsTable(DataTable[Any]):
    """A ``DataTable`` that keeps rendered cells across plain cell updates."""

    def __init__(self, **kwargs: Any) -> None:
        self._plain_updates = 0  # update_cell calls that changed one value and no widths
        self._kept: LRUCache[tuple[Any, ...], tuple[object, Any]] = LRUCache(CELLS_KEPT)
        # a drawn line: (its row, that row's values then, the line)
        self._drawn: LRUCache[tuple[Any, ...], tuple[Any, dict[Any, Any], Strip]] = LRUCache(
            LINES_KEPT
        )
        self.patched_lines = 0  # lines drawn by putting a new text into the line drawn before
        self._refresh_style: Style | None = None  # while render_lines runs
        self._column_x: dict[Any, int] | None = None  # each column's x, while render_lines runs
        self._refresh_view: tuple[int, int, int, int] | None = None  # width, scroll x/y, header
        self._refresh_state: tuple[Any, ...] | None = None  # what shapes every line, likewise
        self._offsets: tuple[Any, list[tuple[RowKey, int]]] | None = None  # (when, line map)
        super().__init__(**kwargs)  # which clears the caches, these too

    def update_cell(
        self,
        row_key: RowKey | str,
        column_key: ColumnKey | str,
        value: Any,
        *,
        update_width: bool = False,
    ) -> None:
        super().update_cell(row_key, column_key, value, update_width=update_width)
        if not update_width:
            self._plain_updates += 1

    def _on_resize(self, _: events.Resize) -> None:
        # Textual's own handler (called after this one, as for every class of the widget)
        # moves the update counter; a new size changes nothing kept here but what the keys
        # hold (the width, the lines on screen), so it counts as a plain update.
        self._plain_updates += 1

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._kept.clear()
        self._drawn.clear()
        self._offsets = None

    def _update_dimensions(self, new_rows: Any) -> None:
        super()._update_dimensions(new_rows)
        self._offsets = None  # an auto-height row may have got its height

    @property
    def _y_offsets(self) -> list[tuple[RowKey, int]]:
        """Textual's line-to-row map, kept across plain cell updates (they move no row)."""
        when = (self._update_count - self._plain_updates, self.row_count)
        if self._offsets is None or self._offsets[0] != when:
            self._offsets = (when, DataTable._y_offsets.fget(self))  # type: ignore[attr-defined]
        return self._offsets[1]

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kept.clear()
        self._drawn.clear()

    def render_lines(self, crop: Region) -> list[Strip]:
        # The table's style (and size, scroll, cursor...), worked out once for all the lines
        # of this refresh: ``render_line`` would walk the widget's ancestors for the style and
        # read a dozen reactive attributes once per line.
        self._refresh_style = self.rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._refresh_style = None
            self._column_x = None
            self._refresh_view = None
            self._refresh_state = None

    def render_line(self, y: int) -> Strip:
        """``DataTable.render_line`` with the style worked out once per refresh."""
        style = self._refresh_style
        if style is None or self.fixed_rows:
            return super().render_line(y)
        view = self._refresh_view
        if view is None:
            header = self.get_row_height(self._header_row_key) if self.show_header else 0
            view = self._refresh_view = (self.size.width, *self.scroll_offset, header)
        width, scroll_x, scroll_y, header = view
        if y >= header:
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + width, style)

    def _line_state(self, base_style: Style) -> tuple[Any, ...]:
        """Everything but the position that shapes a drawn line (kept for this refresh)."""
        state = self._refresh_state
        if state is None or state[3] is not base_style:
            state = (
                self.size.width,
                self.cursor_coordinate,
                self.hover_coordinate,
                base_style,
                self.cursor_type,
                self.show_cursor,
                self._show_hover_cursor,
                self._pseudo_class_state,
                self._update_count - self._plain_updates,  # moves on every other kind of change
            )
            if base_style is self._refresh_style:
                self._refresh_state = state
        return state

    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        if self.fixed_columns or (self._labelled_row_exists and self.show_row_labels):
            return super()._render_line(y, x1, x2, base_style)
        try:
            row_key, line_in_row = self._get_offsets(y)
        except LookupError:
            return super()._render_line(y, x1, x2, base_style)
        header = row_key is self._header_row_key
        values = {} if header else self._data.get(row_key)
        if line_in_row or values is None:
            return super()._render_line(y, x1, x2, base_style)
        key = (y, x1, x2, self._line_state(base_style))
        drawn = self._drawn.get(key)
        if drawn is not None and drawn[0] == row_key:
            strip = self._patched(drawn[1], values, drawn[2], x1)
            if strip is not None:
                self._keep(self._drawn, key, (row_key, dict(values), strip))
                return strip
        strip = super()._render_line(y, x1, x2, base_style)
        self._keep(self._drawn, key, (row_key, dict(values), strip))
        return strip

    @staticmethod
    def _keep(cache: LRUCache[Any, Any], key: Any, value: Any) -> None:
        """``cache[key] = value``, replacing a value kept before (``LRUCache.set`` keeps it)."""
        cache.discard(key)
        cache.set(key, value)

    def _patched(
        self, before: dict[Any, Any], values: dict[Any, Any], strip: Strip, x1: int
    ) -> Strip | None:
        """``strip`` (drawn for the values ``before``) with the texts changed since put in,
        or None when a change is not a same-width plain text."""
        changed = [column for column, value in values.items() if before.get(column) is not value]
        if not changed:
            return strip
        segments = list(strip)
        for column_key in changed:
            old, new = before.get(column_key), values[column_key]
            index = self._column_locations.get(column_key)
            if index is None or old is None or not _same_shape(old, new):
                return None
            if not _put(segments, self._x_of(index) + self.cell_padding - x1, old.plain, new.plain):
                return None
        self.patched_lines += 1
        return Strip(segments, strip.cell_length)

    def _x_of(self, index: int) -> int:
        """Where the column at ``index`` starts in a line: worked out once per refresh."""
        if self._column_x is None:
            self._column_x = {}
            x = 0
            for position, column in enumerate(self.ordered_columns):
                self._column_x[position] = x
                x += column.get_render_width(self)
            if self._refresh_style is None:  # not within a refresh: keep nothing
                column_x, self._column_x = self._column_x, None
                return column_x[index]
        return self._column_x[index]

    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
    ) -> Any:
        if row_index < 0 or column_index < 0:  # the header and row labels: as Textual does
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        row_key = self._row_locations.get_key(row_index)
        column_key = self._column_locations.get_key(column_index)
        if row_key is None or column_key is None:
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        value = self._data[row_key][column_key]
        key = (
            row_key,
            column_key,
            row_index,
            column_index,
            base_style,
            width,
            cursor,
            hover,
            self.show_cursor,
            self._show_hover_cursor,
            self._pseudo_class_state,
            self._update_count - self._plain_updates,  # moves on every other kind of change
        )
        kept = self._kept.get(key)
        if kept is not None and kept[0] is value:
            return kept[1]
        lines = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        self._keep(self._kept, key, (value, lines))
        return lines
