"""The dashboard's detail panes under the sessions table: Output, Tools, Diff, Memory, Details.

Only the Output pane is composed before the first paint: the other panes' widgets (and their
styles and layout) are built when a pane is first shown, by its key, a click on its tab or the
memory key, and filled then from the selection, so opening one shows what it would have shown.
The diff and the memory search run in worker threads (:mod:`ecc.tui.actions`).
:class:`DetailPanes` is a mixin of :class:`~ecc.tui.app.DashboardApp`, whose state it uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Input, Static, TabbedContent, TabPane

from ecc.contract.errors import EccError
from ecc.runtime.terminal import sanitize
from ecc.tui import actions, data, panes

if TYPE_CHECKING:
    from textual.widget import Widget

    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

TABS = ("output", "tools", "diff", "memory", "details")
TOOL_COLUMNS = ("Time", "Tool", "Score", "Action", "Decision", "Input")


class DetailPanes:
    """Build, fill and switch the detail panes (the tab keys call :meth:`action_show_tab`)."""

    if TYPE_CHECKING:  # provided by DashboardApp and textual's App
        config: Config
        cwd: Path
        store: Store
        watcher: data.SessionWatcher
        selected: str | None
        _panes_built: set[str]
        _panes_mounting: set[str]
        _tool_last_id: dict[str, Any]
        _diff_for: str | None
        call_from_thread: Any
        query_one: Any
        run_worker: Any

        def selected_session(self) -> Session | None: ...

    def _pane_widgets(self, name: str) -> list[Widget]:
        """The widgets of the pane ``name`` (not Output), as composed up front before."""
        if name == "tools":
            tools: DataTable[Any] = DataTable(id="tools", cursor_type="row", zebra_stripes=True)
            for label in TOOL_COLUMNS:
                tools.add_column(label, key=label.lower())
            return [tools]
        if name == "memory":
            return [
                Input(placeholder="Search memory (Enter)", id="memory-query"),
                VerticalScroll(Static(Text("Type a query and press Enter.", "dim"), id="memory")),
            ]
        return [VerticalScroll(Static(Text("No session selected.", "dim"), id=name))]

    async def _ensure_pane(self, name: str) -> None:
        """Compose the pane ``name`` the first time it is shown and fill it from the selection
        (the diff loads when its tab activates, the memory on a query). Until its widgets are
        mounted the pane counts as not built, so nothing looks for them."""
        if name in self._panes_built or name in self._panes_mounting:
            return
        self._panes_mounting.add(name)
        await self.query_one(f"#tab-{name}", TabPane).mount(*self._pane_widgets(name))
        self._panes_mounting.discard(name)
        self._panes_built.add(name)
        if name == "details":
            self._show_selected_details()
        elif name == "tools":
            self._load_tool_calls(force=True)

    def _show_selected_details(self) -> None:
        if "details" not in self._panes_built:
            return  # filled when first shown
        session = self.selected_session()
        details = self.query_one("#details", Static)
        if session is None:
            details.update(Text("No session selected.", "dim"))
            return
        details.update(panes.details_text(session, self.store.list_messages(session.id)))

    def _load_tool_calls(self, force: bool = False) -> None:
        if "tools" not in self._panes_built:
            return  # filled when first shown
        sid = self.selected
        summary = self.watcher.risk.get(sid or "") or {}
        last = summary.get("last_id")
        if not force and self._tool_last_id.get(sid or "") == last:
            return
        self._tool_last_id[sid or ""] = last
        table = self.query_one("#tools", DataTable)
        table.clear()
        if not sid or last is None:
            return
        for call in self.store.list_tool_calls(sid, data.TOOL_CALLS_SHOWN):
            table.add_row(*data.tool_call_cells(call, self.config.risk))
        table.move_cursor(row=table.row_count - 1)

    def _active_tab(self) -> str:
        active = self.query_one("#detail", TabbedContent).active
        return active.removeprefix("tab-")

    def load_diff(self) -> None:
        if "diff" not in self._panes_built:
            return  # loads once its widgets are mounted (the tab's activation)
        session = self.selected_session()
        self._diff_for = self.selected
        target = self.query_one("#diff", Static)
        if session is None:
            target.update(Text("No session selected.", "dim"))
            return
        if not session.worktree_branch:
            target.update(Text(f"Session {session.id} has no worktree.", "dim"))
            return
        target.update(Text("Loading diff…", "dim"))
        self.run_worker(
            lambda: self._diff_thread(session), thread=True, group="diff", exclusive=True
        )

    def _diff_thread(self, session: Session) -> None:
        try:
            shown = actions.session_diff(session)
        except EccError as exc:
            shown = Text(sanitize(exc.message), "red")
        self.call_from_thread(self._show_diff, session.id, shown)

    def _show_diff(self, session_id: str, shown: Text) -> None:
        if session_id == self.selected:
            self.query_one("#diff", Static).update(shown)

    async def action_show_tab(self, name: str) -> None:
        await self._ensure_pane(name)
        self.query_one("#detail", TabbedContent).active = f"tab-{name}"

    def search_memory(self, query: str) -> None:
        session = self.selected_session()
        root = Path(session.project_dir) if session else self.cwd
        target = self.query_one("#memory", Static)
        target.update(Text(f"Searching {root}…", "dim"))

        def run() -> None:
            try:
                shown = actions.memory_search(query, root)
            except EccError as exc:
                shown = Text(sanitize(exc.message), "red")
            self.call_from_thread(target.update, shown)

        self.run_worker(run, thread=True, group="memory", exclusive=True)
