"""The detail panes behind the Output tab are composed when first shown, not before the first
paint (their widgets and styles were a tenth of the dashboard's start-up): the first screen has
only the Output pane's widgets, and a pane opened by its key, by a click on its tab or by the
memory key shows what it showed when it was composed up front (the snapshots compare the
rendering; these tests the content and the order of events)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import DataTable, Input, Static

from ecc.store.models import State
from ecc.tui.app import DashboardApp
from tests.tui.conftest import drive, wait_for

HIDDEN = ("#tools", "#diff", "#memory", "#memory-query", "#details")


def _plain(app: DashboardApp, selector: str) -> str:
    content = app.query_one(selector, Static).render()
    return content.plain if isinstance(content, Text) else str(content)


def test_hidden_panes_are_composed_when_first_shown(store, isolated_env) -> None:
    store.insert_session(
        "a1b2c3d4e5f6",
        task="lazy panes",
        harness="shell",
        state=State.QUEUED,
        reason="",
        project_dir="/srv/demo",
        working_dir="/srv/demo",
    )
    store.record_tool_call(
        session_id="a1b2c3d4e5f6",
        harness="claude",
        tool="Bash",
        input={"command": "ls"},
        score=0.1,
        action="none",
        reasons=[],
        decision="allow",
    )
    app = DashboardApp(interval=0.1)

    async def scenario(pilot) -> None:
        await wait_for(pilot, lambda: app.selected == "a1b2c3d4e5f6", "the session selected")
        for selector in HIDDEN:
            assert not app.query(selector), f"{selector} composed before it was shown"
        assert app.query_one("#output")  # the pane on screen is there from the start

        await pilot.press("5")  # by its key: the selected session's fields
        await wait_for(pilot, lambda: "lazy panes" in _plain(app, "#details"), "the details pane")
        await pilot.press("2")
        tools = app.query_one("#tools", DataTable)
        await wait_for(pilot, lambda: tools.row_count == 1, "the tool call")
        assert [cell.plain for cell in tools.get_row_at(0)][1:3] == ["Bash", "0.10"]

        await pilot.click("#detail Tab#--content-tab-tab-diff")  # by a click on its tab
        await wait_for(pilot, lambda: app.query("#diff"), "the diff pane")
        await wait_for(
            pilot, lambda: "has no worktree" in _plain(app, "#diff"), "the diff pane's text"
        )

        await pilot.press("escape", "slash")  # the memory key opens and focuses its input
        await wait_for(pilot, lambda: app.query("#memory-query"), "the memory pane")
        await wait_for(
            pilot, lambda: app.query_one("#memory-query", Input).has_focus, "the query focused"
        )
        assert "Type a query" in _plain(app, "#memory")

        await pilot.press("3", "2", "5")  # shown again: composed once, not twice
        assert len(app.query("#tools")) == len(app.query("#details")) == 1

    drive(app, scenario)
