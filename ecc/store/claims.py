"""Who runs a session, and when: runner claims, parallel slots, the queue, heartbeats, stops.

Each claim is one conditional ``UPDATE`` checked by its row count, so two runners (or a runner
and the lease reaper) racing for a session cannot both win; the slot claim alone needs the
dialect's serialising lock, hidden behind :meth:`Claims.claim_slot`. A part of
:class:`ecc.store.base.Store`, written in the SQL both dialects accept.
"""

from __future__ import annotations

from ecc.store.models import TERMINAL, Session, State, check_transition, now_iso

TYPE_CHECKING = False  # typing stays unimported here: ``ecc hook`` and ``ecc run -d`` open stores
if TYPE_CHECKING:
    from collections.abc import Sequence
    from contextlib import AbstractContextManager
    from typing import Any


class Claims:
    """The runner's and the reaper's claims on sessions; mixed into the Store."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

        def _serialise(self, name: str) -> None: ...

        def transaction(self) -> AbstractContextManager[None]: ...

        def _event(
            self,
            session_id: str,
            kind: str,
            from_state: str | None,
            to_state: str | None,
            reason: str,
            data: dict[str, Any] | None,
            now: str,
        ) -> None: ...

    def claim_runner(self, session_id: str, pid: int, host: str, token: str | None) -> bool:
        """At most once: only one runner may own a pending/queued session at a time."""
        return (
            self._exec(
                "UPDATE sessions SET runner_pid = ?, runner_host = ?, runner_token = ?, "
                "attempts = attempts + 1, heartbeat_at = ?, updated_at = ? "
                "WHERE id = ? AND runner_pid IS NULL AND state IN ('pending', 'queued') "
                "AND stop_requested = 0",
                (pid, host, token, now_iso(), now_iso(), session_id),
            )
            == 1
        )

    def release_runner(self, session_id: str, pid: int) -> bool:
        return (
            self._exec(
                "UPDATE sessions SET runner_pid = NULL, runner_token = NULL, updated_at = ? "
                "WHERE id = ? AND runner_pid = ?",
                (now_iso(), session_id, pid),
            )
            == 1
        )

    def claim_slot(self, session_id: str, worktree_limit: int, session_limit: int) -> bool:
        """Take one of the parallel slots for ``session_id`` if both limits allow it.

        A session that uses a worktree counts against ``worktree_limit`` too. Serialised by the
        dialect's lock ``slots`` (SQLite: the write lock; PostgreSQL: an advisory lock).
        """
        with self.transaction():
            self._serialise("slots")
            changed = self._exec(
                "UPDATE sessions SET slot = 1, updated_at = ? WHERE id = ? AND slot = 0 "
                "AND state IN ('pending', 'queued') "
                "AND (SELECT COUNT(*) FROM sessions WHERE slot = 1) < ? "
                "AND (use_worktree = 0 OR "
                "(SELECT COUNT(*) FROM sessions WHERE slot = 1 AND use_worktree = 1) < ?)",
                (now_iso(), session_id, session_limit, worktree_limit),
            )
        return changed == 1

    def slot_free(self, use_worktree: bool, worktree_limit: int, session_limit: int) -> bool:
        row = self._one(
            "SELECT COUNT(*) AS total, "
            "COALESCE(SUM(CASE WHEN use_worktree = 1 THEN 1 ELSE 0 END), 0) AS worktrees "
            "FROM sessions WHERE slot = 1"
        )
        assert row is not None
        if row["total"] >= session_limit:
            return False
        return not (use_worktree and row["worktrees"] >= worktree_limit)

    def release_slot(self, session_id: str) -> None:
        self._exec("UPDATE sessions SET slot = 0 WHERE id = ?", (session_id,))

    def slots_in_use(self) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM sessions WHERE slot = 1")
        return int(row["n"]) if row else 0

    def enqueue(self, session_id: str, repo_root: str | None) -> None:
        self._exec(
            "INSERT INTO worktree_queue (session_id, repo_root, requested_at) VALUES (?, ?, ?) "
            "ON CONFLICT (session_id) DO NOTHING",
            (session_id, repo_root, now_iso()),
        )

    def queued_sessions(self) -> list[Session]:
        """Queued sessions, first come first served."""
        rows = self._rows(
            "SELECT s.* FROM sessions s LEFT JOIN worktree_queue q ON q.session_id = s.id "
            "WHERE s.state = 'queued' ORDER BY COALESCE(q.requested_at, s.created_at), s.id"
        )
        return [Session.from_row(row) for row in rows]

    def fail_if_silent(self, session_id: str, heartbeat_seen: str | None, reason: str) -> bool:
        """The lease reaper's one write: fail a running (or claimed) session only if its
        heartbeat is still the one the reaper judged, so a beat that lands meanwhile wins.

        Never re-queues anything: a re-run is always a new, explicit request.
        """
        now = now_iso()
        with self.transaction():
            row = self._one("SELECT state FROM sessions WHERE id = ?", (session_id,))
            if row is None or State(row["state"]) in TERMINAL:
                return False
            check_transition(row["state"], State.FAILED)
            changed = self._exec(
                "UPDATE sessions SET state = 'failed', reason = ?, ended_at = ?, slot = 0, "
                "harness_pid = NULL, updated_at = ? WHERE id = ? AND state = ? "
                "AND COALESCE(heartbeat_at, '') = ?",
                (reason, now, now, session_id, row["state"], heartbeat_seen or ""),
            )
            if changed != 1:
                return False
            self._exec("DELETE FROM worktree_queue WHERE session_id = ?", (session_id,))
            self._event(session_id, "transition", row["state"], "failed", reason, None, now)
        return True

    def heartbeat(self, session_id: str) -> None:
        now = now_iso()
        self._exec("UPDATE sessions SET heartbeat_at = ? WHERE id = ?", (now, session_id))

    def request_stop(self, session_id: str, grace: float) -> None:
        self._exec(
            "UPDATE sessions SET stop_requested = 1, stop_grace = ?, updated_at = ? WHERE id = ?",
            (grace, now_iso(), session_id),
        )
