"""The sessions table: a ``DataTable`` whose cell updates re-render only the cells that changed.

Textual's table keys every rendered cell on one counter that each ``update_cell`` bumps, so the
age tick (a new age text in every young row on screen, each second) re-rendered every cell of
every row on screen: most of the dashboard's idle CPU with many young sessions. This subclass
keeps each rendered cell until its own value (by identity) or anything else that shapes it
(position, width, style, cursor, hover, a change other than a plain cell update) changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.cache import LRUCache
from textual.widgets import DataTable

if TYPE_CHECKING:
    from rich.style import Style
    from textual.widgets.data_table import ColumnKey, RowKey

CELLS_KEPT = 10_000


class SessionsTable(DataTable[Any]):
    """A ``DataTable`` that keeps rendered cells across plain cell updates."""

    def __init__(self, **kwargs: Any) -> None:
        self._plain_updates = 0  # update_cell calls that changed one value and no widths
        self._kept: LRUCache[tuple[Any, ...], tuple[object, Any]] = LRUCache(CELLS_KEPT)
        super().__init__(**kwargs)  # which clears the caches, this one too

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

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._kept.clear()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kept.clear()

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
        self._kept[key] = (value, lines)
        return lines
