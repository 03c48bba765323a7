"""The dashboard's send key: a one-line input whose text goes to the selected session's agent
as a follow-up (``ecc send``), driven through Textual's Pilot on a fake ``claude``."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, Static

from ecc.sessions import manager
from ecc.tui.app import DashboardApp
from ecc.tui.screens import PromptScreen
from tests.sessions.fake_agent import FakeAgent
from tests.tui.conftest import drive, select, wait_for


def test_the_send_key_continues_the_selected_session(
    sessions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = FakeAgent(tmp_path)
    for name, value in agent.env.items():
        monkeypatch.setenv(name, value)
    shell = sessions.start("echo no conversation here")
    request = manager.Request(task="sketch it", harness="claude", use_worktree=False,
                              cwd=sessions.default_cwd)  # fmt: skip
    claude = manager.create(sessions.store, request, sessions.config)
    manager.submit(sessions.store, claude)
    sessions.wait(shell.id)
    sessions.wait(claude.id)
    app = DashboardApp(interval=0.2)

    async def scenario(pilot) -> None:
        await select(pilot, app, shell.id)
        await pilot.press("t")  # no conversation to continue: the key does nothing there
        await pilot.pause(0.2)
        assert not isinstance(app.screen, PromptScreen)
        await select(pilot, app, claude.id)
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the input")
        await pilot.press("escape")  # cancelled: nothing sent
        await wait_for(pilot, lambda: not isinstance(app.screen, PromptScreen), "it closed")
        await pilot.press("t")
        await wait_for(pilot, lambda: isinstance(app.screen, PromptScreen), "the input")
        app.screen.query_one("#prompt", Input).value = "now polish it"
        await pilot.press("enter")
        await wait_for(
            pilot,
            lambda: (s := sessions.store.get_session(claude.id)) and s.attempts == 2 and s.terminal,
            "the follow-up run to end",
        )
        assert any(f"Message sent to session {claude.id}" in m for m in app.messages)
        await pilot.press("5")  # the Details pane (composed when first shown) has the conversation
        details = app.query_one("#details", Static)
        await wait_for(
            pilot,
            lambda: "[run 2] you: now polish it" in getattr(details.render(), "plain", ""),
            "the conversation in the details pane",
        )

    drive(app, scenario)
    assert [c["prompt"] for c in agent.calls()] == ["sketch it", "now polish it"]
    assert agent.calls()[1]["resume"] == sessions.store.get_session(claude.id).harness_session_id
