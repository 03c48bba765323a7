"""The footer is rebuilt only when the keys it shows change: moving between sessions (or a poll
that changed the selected session's tokens) whose Send, Approve and Deny keys stay hidden used
to rebuild every footer key each time (a dozen widgets styled anew), part of the first paint
and of the CPU of watching a running session; a session that starts waiting still shows them."""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from ecc.store.models import State
from ecc.tui.app import DashboardApp
from ecc.tui.footer import CoalescedFooter
from tests.tui.conftest import drive, wait_for

IDS = ("a1b2c3d4e5f6", "b1b2c3d4e5f6", "c1b2c3d4e5f6")


def _shown(app: DashboardApp) -> set[str]:
    return {binding.action for _, binding, *_ in app.screen.active_bindings.values()}


def test_the_footer_is_rebuilt_only_when_its_keys_change(store, isolated_env) -> None:
    for sid in IDS:
        store.insert_session(
            sid,
            task=f"task {sid}",
            harness="shell",
            state=State.RUNNING,
            reason="",
            project_dir="/srv/demo",
            working_dir="/srv/demo",
        )
    app = DashboardApp(interval=0.1)

    async def scenario(pilot) -> None:
        await wait_for(pilot, lambda: app.selected is not None, "a session selected")
        await pilot.pause(0.3)
        footer = app.query_one(Footer)
        rebuilt: list[int] = []
        original = footer.recompose

        async def counted() -> None:
            rebuilt.append(1)
            await original()

        footer.recompose = counted  # type: ignore[method-assign]
        for key in ("down", "down", "up", "up"):
            await pilot.press(key)
            await pilot.pause(0.05)
        store.update_session(app.selected, input_tokens=5, output_tokens=7)
        await pilot.pause(0.4)  # a few polls that change the selected session
        assert rebuilt == [], "the footer was rebuilt though its keys stayed the same"

        store.create_approval(  # the selected session's tool call waits for a person
            "ap-1",
            session_id=app.selected,
            harness="claude",
            tool="Bash",
            input_excerpt="rm -rf build",
            score=0.65,
            action="require_confirmation",
            reasons=[],
            timeout_secs=600,
            on_timeout="deny",
        )
        await wait_for(pilot, lambda: "approve" in _shown(app) and rebuilt, "the Approve key")
        await wait_for(
            pilot,
            lambda: any("Approve" in str(key.render()) for key in footer.children),
            "Approve in the footer",
        )

    drive(app, scenario)


def _count_rebuilds(footer: Footer) -> list[int]:
    rebuilt: list[int] = []
    original = footer.recompose

    async def counted() -> None:
        rebuilt.append(1)
        await original()

    footer.recompose = counted  # type: ignore[method-assign]
    return rebuilt


def test_binding_updates_in_one_frame_rebuild_the_footer_once(store, isolated_env) -> None:
    """Textual sends the footer a binding update for each of several causes in one frame and
    the footer rebuilt its keys for each; the last rebuild reads the same bindings as the
    first."""
    app = DashboardApp(interval=0.1)

    async def scenario(pilot) -> None:
        await pilot.pause(0.3)
        footer = app.query_one(Footer)
        rebuilt = _count_rebuilds(footer)
        app.bind("z", "bell", description="Zap")
        for _ in range(3):
            app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause(0.3)
        assert rebuilt == [1]
        assert any("Zap" in str(key.render()) for key in footer.children)
        assert any("Quit" in str(key.render()) for key in footer.children)

    drive(app, scenario)


def test_a_binding_update_that_changes_no_key_rebuilds_nothing(store, isolated_env) -> None:
    """Textual sends an update once more after the first refresh (from the focus) and on
    other occasions where the keys stay the same: each rebuilt every key."""
    app = DashboardApp(interval=0.1)

    async def scenario(pilot) -> None:
        await pilot.pause(0.3)
        footer = app.query_one(Footer)
        rebuilt = _count_rebuilds(footer)
        app.screen.bindings_updated_signal.publish(app.screen)
        await pilot.pause(0.3)
        assert rebuilt == []
        assert any("Quit" in str(key.render()) for key in footer.children)

    drive(app, scenario)


def test_the_footer_keys_are_built_with_the_footer_and_styled_once(
    store, isolated_env, monkeypatch
) -> None:
    """At start-up the footer's keys were built after the first refresh and again after the
    next (the focus sends a last update then): two more layouts of the screen before its first
    idle. Each key also gained the ``-compact`` class at mount and lost it again (two
    restylings each). The keys show as they did, not compact (but the command palette's)."""
    made_compact: list[FooterKey] = []
    original = FooterKey._watch_compact

    def watched(key: FooterKey, compact: bool) -> None:
        if compact:
            made_compact.append(key)
        original(key, compact)

    monkeypatch.setattr(FooterKey, "_watch_compact", watched)
    rebuilt: list[int] = []
    original_recompose = CoalescedFooter.recompose

    async def counted(footer: CoalescedFooter) -> None:
        rebuilt.append(1)
        await original_recompose(footer)

    monkeypatch.setattr(CoalescedFooter, "recompose", counted)
    app = DashboardApp(interval=0.1)

    async def scenario(pilot) -> None:
        await pilot.pause(0.3)
        keys = list(app.query(FooterKey))
        assert any("Quit" in str(key.render()) for key in keys)
        assert rebuilt == []
        commands = [key for key in keys if key.has_class("-command-palette")]
        others = [key for key in keys if key not in commands]
        assert len(commands) == 1 and commands[0].has_class("-compact")  # as Textual has it
        assert others and not any(key.has_class("-compact") or key.compact for key in others)
        assert not [key for key in made_compact if key in others]

    drive(app, scenario)
