"""The dashboard application: a sessions table over detail panes, a status bar and a footer.

The UI thread only reads the store (incrementally, see :mod:`ecc.tui.data`). Every action runs in
a worker thread with its own store connection, so a slow stop or git command never freezes the
screen: the keys that steer sessions are in :mod:`ecc.tui.controls`, and what the threads do (the
same functions the CLI uses) in :mod:`ecc.tui.actions`. The detail panes (built when first
shown) are in :mod:`ecc.tui.detail`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import events, on
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.css.query import NoMatches
from textual.widgets import (
    DataTable,
    Header,
    Input,
    Log,
    Static,
    TabbedContent,
    TabPane,
)

from ecc.contract.errors import EccError
from ecc.runtime.terminal import sanitize
from ecc.tui import data, grouping
from ecc.tui.controls import SessionControls
from ecc.tui.detail import TABS, DetailPanes
from ecc.tui.footer import CoalescedFooter
from ecc.tui.table import SessionsTable

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

AGE_REFRESH_SECS = 1.0
# the keys shown only for some sessions
SELECTION_ACTIONS = ("send", "approve", "deny", "resolve_conflict")


class DashboardApp(SessionControls, DetailPanes, App[None]):
    """Watch and steer every session."""

    TITLE = "ecc dashboard"
    CSS = """
    #sessions {
        height: 1fr;
        min-height: 6;
    }
    #detail {
        height: 1fr;
        min-height: 8;
        border-top: solid $accent;
    }
    #output {
        height: 1fr;
    }
    #status {
        height: 1;
        padding: 0 1;
        background: $panel;
    }
    #memory-query {
        margin-bottom: 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "new_session", "New"),
        Binding("s", "stop", "Stop"),
        Binding("u", "resume", "Resume"),
        Binding("t", "send", "Send"),  # shown while the selected session has a conversation
        Binding("m", "merge", "Merge"),
        Binding("p", "prune", "Prune"),
        Binding("d", "remove", "Remove"),
        Binding("a", "approve", "Approve"),  # shown while the selected session waits
        Binding("x", "deny", "Deny"),
        Binding("c", "resolve_conflict", "Resolve"),  # shown while it is part of a conflict
        Binding("slash", "search_memory", "Memory"),
        Binding("f", "filter", "Filter"),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "quit", "Quit"),
        Binding("escape", "focus_sessions", "Sessions", show=False),
        *(
            Binding(str(number), f"show_tab('{name}')", name.title(), show=False)
            for number, name in enumerate(TABS, start=1)
        ),
    ]

    def __init__(
        self,
        *,
        config: Config | None = None,
        interval: float = 0.25,
        query: str = "",
        cwd: Path | None = None,
        clock: data.Clock = data.wall_clock,
        output_capacity: int = data.OUTPUT_CAPACITY,
    ) -> None:
        super().__init__()
        if config is None:
            from ecc.runtime.config.view import view

            config = view()
        from ecc.store.open import open_store

        self.config = config
        self.store: Store = open_store(config=config)
        self.watcher = data.SessionWatcher(self.store)
        self.follower = data.OutputFollower(output_capacity)
        self.interval = interval
        self.query_text = query
        self.cwd = (cwd or Path.cwd()).resolve()
        self.clock = clock
        self.selected: str | None = None
        self.messages: list[str] = []  # every notification shown (tests and the tmux capture)
        self._row_order: list[str] = []
        self.membership = grouping.Membership()  # groups show as one row (ecc/tui/grouping.py)
        self.opened_groups: set[str] = set()
        self._group_rows: dict[str, grouping.Row] = {}
        self._cells: dict[str, dict[str, Text]] = {}
        self._tool_last_id: dict[str, Any] = {}
        self._output_dirty = True
        self._diff_for: str | None = None
        self._select_when_seen: str | None = None
        self._since_ages = 0.0
        self.task_width = data.TASK_WIDTH
        self._tables_ready = False  # the sessions table has its columns
        self._panes_built: set[str] = {"output"}  # the panes whose widgets are mounted
        self._panes_mounting: set[str] = set()
        self._bindings_shown = (False,) * len(SELECTION_ACTIONS)  # as with nothing selected

    # -- layout ----------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Header(show_clock=False, icon="◆")
        with Vertical():
            yield SessionsTable(id="sessions", cursor_type="row", zebra_stripes=True)
            with TabbedContent(id="detail", initial="tab-output"):
                with TabPane("1 Output", id="tab-output"):
                    yield Log(id="output", max_lines=self.follower.capacity)
                for number, name in enumerate(TABS[1:], start=2):
                    yield TabPane(f"{number} {name.title()}", id=f"tab-{name}")
        yield Static(id="status")
        yield CoalescedFooter()

    def on_mount(self) -> None:
        table = self.query_one("#sessions", DataTable)
        for key, label in data.COLUMNS:
            table.add_column(label, key=key)
        self.task_width = data.task_width(self.size.width)
        self._tables_ready = True
        self.refresh_now(force=True)
        # Focused now, as Textual's auto focus would (it looks before the table is mounted in
        # its container): focus() waits for a later frame, and the rows on screen were drawn
        # twice, unfocused and then focused, before the first idle.
        table.has_focus = True
        self.screen.set_focus(table)
        self.set_interval(self.interval, self._tick, name="store-poll")

    def on_resize(self, event: events.Resize) -> None:
        width = data.task_width(event.size.width)
        if width != self.task_width:
            self.task_width = width
            if self._tables_ready:
                self._row_order = []  # rebuild the rows with the new task width
                self.refresh_now(force=True)

    def on_unmount(self) -> None:
        self.store.close()

    # -- refresh ---------------------------------------------------------------------------

    def _tick(self) -> None:
        try:
            self.refresh_now()
        except EccError as exc:  # a locked or vanished store must not kill the screen
            self.report(f"store: {exc.message}", error=True)
        except NoMatches:
            # The main screen's widgets exist from mount until the app closes; a tick that
            # fires while they are being torn down has nothing left to refresh.
            pass

    def refresh_now(self, force: bool = False) -> None:
        """Read what changed in the store and update what shows it."""
        changes = self.watcher.poll(force=force)
        self._since_ages += self.interval
        if changes or force:
            self._sync_table(changes)
            self._update_status()
        elif self._since_ages >= AGE_REFRESH_SECS:
            self._refresh_ages()
        if self._since_ages >= AGE_REFRESH_SECS:
            self._since_ages = 0.0
        if changes.store_changed or self._output_dirty:
            self._poll_output()
        if self.selected and (
            self.selected in changes.changed or self.selected in changes.risk_changed
        ):
            self._show_selected_details()
            self._load_tool_calls()
            self._follow_bindings()  # approve/deny follow its waiting state

    def _visible(self) -> list[Session]:
        return self.watcher.ordered(self.query_text)

    def _sync_table(self, changes: data.Changes) -> None:
        table = self.query_one("#sessions", DataTable)
        sessions = self._visible()
        self.membership.update(self.store, sessions)
        rows = grouping.layout(sessions, self.membership.group_of, self.opened_groups)
        order = [row.key for row in rows]
        now = self.clock()
        if order != self._row_order:
            keep = self._select_when_seen if self._select_when_seen in order else self.selected
            cursor = table.cursor_row
            under = self._row_order[cursor] if 0 <= cursor < len(self._row_order) else None
            if grouping.group_key(under) and under in order and not self._select_when_seen:
                keep = under  # a group's row stays under the cursor (it selects no session)
            table.clear()
            self._cells = {}
            self._group_rows = {row.key: row for row in rows if row.session is None}
            for row in rows:
                if row.session is None:
                    opened = row.group in self.opened_groups
                    cells = grouping.cells(row, opened, now, self.task_width)
                else:
                    cells = self._cells_for(row.session, now)
                self._cells[row.key] = cells
                table.add_row(*(cells[key] for key, _ in data.COLUMNS), key=row.key)
            self._row_order = order
            if keep in order:
                table.move_cursor(row=order.index(keep))
                if keep == self._select_when_seen:
                    self._select_when_seen = None
            self._select(self._session_at(order[table.cursor_row]) if order else None)
            return
        changed = (changes.changed | changes.risk_changed) & set(order)
        for sid in changed:
            self._update_row(table, self.watcher.sessions[sid], now)
        for row in rows:
            if row.session is None and any(m.id in changes.changed for m in row.members):
                self._update_group_row(table, row, now)

    @staticmethod
    def _session_at(key: str | None) -> str | None:
        """The session a row's key selects: none for a group's own row."""
        return None if grouping.group_key(key) else key

    def _update_group_row(self, table: DataTable, row: grouping.Row, now: Any) -> None:
        opened = row.group in self.opened_groups
        cells = grouping.cells(row, opened, now, self.task_width)
        old = self._cells.get(row.key, {})
        for key, value in cells.items():
            if old.get(key) != value:
                table.update_cell(row.key, key, value)
        self._cells[row.key] = cells

    @on(DataTable.RowSelected, "#sessions")
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a group's row opens it into its members' rows, or closes it."""
        gid = grouping.group_key(event.row_key.value if event.row_key else None)
        if gid is None:
            return
        if gid in self.opened_groups:
            self.opened_groups.discard(gid)
        else:
            self.opened_groups.add(gid)
        self.refresh_now(force=True)

    def _cells_for(self, session: Session, now: Any) -> dict[str, Text]:
        risk = self.watcher.risk.get(session.id)
        depth = self.watcher.depths.get(session.id, 0)
        return data.row_cells(session, risk, self.config, now, self.task_width, depth)

    def _update_row(self, table: DataTable, session: Session, now: Any) -> None:
        cells = self._cells_for(session, now)
        old = self._cells.get(session.id, {})
        for key, value in cells.items():
            if old.get(key) != value:
                table.update_cell(session.id, key, value)
        self._cells[session.id] = cells

    def _refresh_ages(self) -> None:
        """Update the age cells on screen only: with hundreds of young sessions, touching every
        row each second is most of the idle CPU. A row scrolled into view catches up at the next
        refresh (within a second), as every row did before."""
        table = self.query_one("#sessions", DataTable)
        now = self.clock()
        first = max(int(table.scroll_y), 0)
        for sid in self._row_order[first : first + table.size.height]:
            session = self.watcher.sessions.get(sid)
            if session is None:
                continue
            age = data.age_text(session, now)
            if self._cells[sid]["age"].plain != age:
                self._cells[sid]["age"] = Text(age)
                table.update_cell(sid, "age", self._cells[sid]["age"])

    def _update_status(self) -> None:
        sessions = list(self.watcher.sessions.values())
        status = data.status_text(sessions, self.config, self.query_text, len(self._row_order))
        self.query_one("#status", Static).update(status)
        running = sum(1 for s in sessions if s.state.value == "running")
        self.sub_title = f"{running} running / {len(sessions)} total"

    # -- selection and panes ---------------------------------------------------------------

    @on(DataTable.RowHighlighted, "#sessions")
    def _row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._select(self._session_at(event.row_key.value) if event.row_key else None)

    def _select(self, session_id: str | None) -> None:
        if session_id == self.selected:
            return
        self.selected = session_id
        self.follower.select(session_id)
        self.query_one("#output", Log).clear()
        self._output_dirty = True
        self._poll_output()
        self._show_selected_details()
        self._load_tool_calls(force=True)
        self._follow_bindings()
        self._diff_for = None
        if self._active_tab() == "diff":
            self.load_diff()

    def _follow_bindings(self) -> None:
        """Refresh the footer's keys when the selection changed which of them show (Send,
        Approve, Deny, Resolve): every refresh rebuilds all the footer's keys, so moving between
        sessions or a poll of a running session no longer does it for nothing."""
        shown = tuple(bool(self.check_action(action, ())) for action in SELECTION_ACTIONS)
        if shown != self._bindings_shown:
            self._bindings_shown = shown
            self.refresh_bindings()

    def selected_session(self) -> Session | None:
        return self.watcher.sessions.get(self.selected) if self.selected else None

    def _poll_output(self) -> None:
        self._output_dirty = False
        reset, rows = self.follower.poll(self.store)
        log = self.query_one("#output", Log)
        if reset:
            log.clear()
        if rows:
            log.write_lines([data.output_line(row) for row in rows])

    @on(TabbedContent.TabActivated, "#detail")
    async def _tab_activated(self, event: TabbedContent.TabActivated) -> None:
        await self._ensure_pane(self._active_tab())  # a click on a tab not shown before
        if self._active_tab() == "diff" and self._diff_for != self.selected:
            self.load_diff()

    # -- messages --------------------------------------------------------------------------

    def report(self, message: str, *, error: bool = False) -> None:
        text = sanitize(message)
        self.messages.append(("error: " if error else "") + text)
        self.notify(text, severity="error" if error else "information", markup=False)

    # -- actions ---------------------------------------------------------------------------

    def action_focus_sessions(self) -> None:
        self.query_one("#sessions", DataTable).focus()

    def action_refresh(self) -> None:
        self.refresh_now(force=True)
        self._diff_for = None
        if self._active_tab() == "diff":
            self.load_diff()

    def action_filter(self) -> None:
        def apply(value: str | None) -> None:
            if value is None:
                return
            self.query_text = value
            self.refresh_now(force=True)

        from ecc.tui.screens import PromptScreen  # a dialog's module: when first opened

        self.push_screen(
            PromptScreen("Filter sessions", self.query_text, "words or state:running"), apply
        )

    async def action_search_memory(self) -> None:
        await self.action_show_tab("memory")
        self.query_one("#memory-query", Input).focus()

    @on(Input.Submitted, "#memory-query")
    def _memory_query(self, event: Input.Submitted) -> None:
        self.search_memory(event.value)


def run(*, interval: float = 0.25, query: str = "") -> None:
    DashboardApp(interval=interval, query=query).run()
