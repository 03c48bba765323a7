"""The dashboard's keys that steer sessions: new, stop, resume, send a follow-up (shown only
while the selected session has a conversation), remove, prune, merge, approve or deny the
selected session's held tool call (shown only while it waits), and resolve the conflict that
paused a session (shown only while the selected session is part of an open one).

Each checks the selection, asks before it destroys anything (:class:`~ecc.tui.screens.
ConfirmScreen`) and runs its operation from :mod:`ecc.tui.actions` in a worker thread with a
store connection of its own, then reports the outcome and refreshes the screen.
:class:`SessionControls` is a mixin of :class:`~ecc.tui.app.DashboardApp`, whose state it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.tui import actions

if TYPE_CHECKING:
    from rich.text import Text

    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session
    from ecc.tui.data import SessionWatcher


class SessionControls:
    """The session-steering actions of the dashboard (bound to keys in its ``BINDINGS``)."""

    if TYPE_CHECKING:  # provided by DashboardApp and textual's App
        config: Config
        cwd: Path
        store: Store
        watcher: SessionWatcher
        _select_when_seen: str | None
        call_from_thread: Any
        push_screen: Any
        run_worker: Any

        def selected_session(self) -> Session | None: ...
        def report(self, message: str, *, error: bool = False) -> None: ...
        def refresh_now(self, force: bool = False) -> None: ...

    def _in_thread(self, label: str, work: Callable[[Store], str | None]) -> None:
        """Run ``work`` with its own store connection in a thread; report what it returns."""

        def run() -> None:
            from ecc.store.open import open_store

            try:
                store = open_store(config=self.config)
                try:
                    message = work(store)
                finally:
                    store.close()
            except EccError as exc:
                self.call_from_thread(self.report, f"{label}: {exc.message}", error=True)
                return
            except Exception as exc:  # keep the dashboard alive; say what went wrong
                self.call_from_thread(self.report, f"{label} failed: {exc}", error=True)
                return
            if message:
                self.call_from_thread(self.report, message)
            self.call_from_thread(self.refresh_now, True)

        self.run_worker(run, thread=True, group="actions", name=label)

    def _need_selected(self) -> Session | None:
        session = self.selected_session()
        if session is None:
            self.report("no session selected", error=True)
        return session

    def action_new_session(self) -> None:
        from ecc.sessions import harnesses

        try:
            names = sorted(harnesses.available(self.config))
        except EccError as exc:
            self.report(exc.message, error=True)
            names = []
        session = self.selected_session()
        from ecc.tui.screens import NewSessionScreen  # a dialog's module: when first opened

        screen = NewSessionScreen(
            names,
            sorted(self.config.agent_profiles),
            default_harness=self.config.default_harness,
            default_profile=self.config.default_profile,
            directory=Path(session.project_dir) if session else self.cwd,
            use_worktree=self.config.auto_create_worktrees,
        )
        self.push_screen(screen, self._create_session)

    def _create_session(self, values: dict[str, Any] | None) -> None:
        if not values:
            return

        def work(store: Store) -> str:
            session = actions.start_session(store, self.config, values)
            self._select_when_seen = session.id
            return f"Session {session.id} started ({session.harness})"

        self._in_thread("new session", work)

    def action_stop(self) -> None:
        session = self._need_selected()
        if session is None:
            return
        if session.terminal:
            self.report(f"session {session.id} is already {session.state.value}", error=True)
            return

        def work(store: Store) -> str:
            return actions.stop_session(store, self.config, session.id)

        body = actions.stop_question(session)
        self._confirm("Stop session", body, "Stop", lambda: self._in_thread("stop", work))

    def action_resume(self) -> None:
        session = self._need_selected()
        if session is None:
            return

        def work(store: Store) -> str:
            return actions.resume_session(store, self.config, session.id)

        self._in_thread("resume", work)

    def action_send(self) -> None:
        session = self._need_selected()
        if session is None or not session.harness_session_id:
            return

        def send(text: str | None) -> None:
            if text is None:
                return  # cancelled: nothing sent

            def work(store: Store) -> str:
                return actions.send_message(store, self.config, session.id, text)

            self._in_thread("send", work)

        title = f"Next instruction for {session.id} (Enter sends; Esc cancels)"
        from ecc.tui.screens import PromptScreen

        self.push_screen(PromptScreen(title, "", "what the agent should do next"), send)

    def action_remove(self) -> None:
        session = self._need_selected()
        if session is None:
            return
        if session.active:
            self.report(f"session {session.id} is {session.state.value}; stop it first", error=True)
            return

        def work(store: Store) -> str:
            return actions.remove_session(store, self.config, session.id)

        body = actions.remove_question(session)
        self._confirm("Remove session", body, "Remove", lambda: self._in_thread("remove", work))

    def action_prune(self) -> None:
        finished = [s for s in self.watcher.sessions.values() if s.terminal and s.worktree_branch]
        if not finished:
            self.report("no finished session has a worktree to prune")
            return

        def work(store: Store) -> str:
            return actions.prune_worktrees(store, self.config)

        body = actions.prune_question(len(finished))
        self._confirm("Prune worktrees", body, "Prune", lambda: self._in_thread("prune", work))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Approve and deny exist (and show in the footer) only while the selected session
        waits for a decision."""
        if action in ("approve", "deny"):
            session = self.selected_session()
            return session is not None and session.display_state == "waiting"
        if action == "send":  # a follow-up continues a conversation the harness reported
            session = self.selected_session()
            return session is not None and bool(session.harness_session_id)
        if action == "resolve_conflict":
            session = self.selected_session()
            return session is not None and bool(session.open_conflict)
        return True

    def action_resolve_conflict(self) -> None:
        session = self._need_selected()
        if session is None or not session.open_conflict:
            return
        conflict_id = session.open_conflict
        try:
            incident = self.store.get_conflict(conflict_id)
        except EccError as exc:
            self.report(f"resolve: {exc.message}", error=True)
            return

        def work(store: Store) -> str:
            return actions.resolve_conflict(store, self.config, conflict_id)

        body = actions.conflict_question(incident)
        self._confirm("Resolve conflict", body, "Resolve", lambda: self._in_thread("resolve", work))

    def _held_call(self) -> dict[str, Any] | None:
        session = self._need_selected()
        if session is None:
            return None
        approval = self.store.get_approval(session.pending_approval or "")
        if approval is None or approval["decision"] is not None:
            self.report(f"session {session.id} has no tool call waiting", error=True)
            return None
        return approval

    def action_approve(self) -> None:
        approval = self._held_call()
        if approval is None:
            return

        def work(store: Store) -> str:
            return actions.decide_approval(store, approval["id"], "allow", None)

        body = actions.approval_question(approval)
        self._confirm("Run tool call", body, "Approve", lambda: self._in_thread("approve", work))

    def action_deny(self) -> None:
        approval = self._held_call()
        if approval is None:
            return

        def deny(reason: str | None) -> None:
            if reason is None:
                return  # cancelled: still held

            def work(store: Store) -> str:
                return actions.decide_approval(store, approval["id"], "deny", reason)

            self._in_thread("deny", work)

        title = f"Deny {approval['tool']} call {approval['id']}: why? (Enter; Esc cancels)"
        from ecc.tui.screens import PromptScreen

        self.push_screen(PromptScreen(title, "", "optional; the agent is told"), deny)

    def action_merge(self) -> None:
        session = self._need_selected()
        if session is None:
            return
        if not session.worktree_branch:
            self.report(f"session {session.id} has no worktree", error=True)
            return
        if not session.terminal:
            self.report(
                f"session {session.id} is {session.state.value}; wait for it or stop it",
                error=True,
            )
            return

        def check() -> None:
            try:
                info, merge = actions.merge_check(session)
            except EccError as exc:
                self.call_from_thread(self.report, f"merge: {exc.message}", error=True)
                return
            self.call_from_thread(self._offer_merge, session, info, merge)

        self.run_worker(check, thread=True, group="actions", name="mergeability")

    def _offer_merge(self, session: Session, info: Any, merge: Any) -> None:
        body, allowed = actions.merge_question(session, info, merge)

        def work(store: Store) -> str:
            return actions.merge_worktree(store, session)

        self._confirm(
            "Merge worktree", body, "Merge", lambda: self._in_thread("merge", work), allowed
        )

    def _confirm(
        self,
        title: str,
        body: Text,
        label: str,
        then: Callable[[], None],
        allowed: bool = True,
    ) -> None:
        def done(confirmed: bool | None) -> None:
            if confirmed:
                then()

        from ecc.tui.screens import ConfirmScreen

        self.push_screen(ConfirmScreen(title, body, confirm_label=label, allowed=allowed), done)
