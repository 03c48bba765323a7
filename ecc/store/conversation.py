"""A session's conversation: every prompt its runs were given and the agent's answers.

The table ``messages`` (migration 7) holds one row per turn: ``role`` ``user`` (a run's prompt:
the task, or a follow-up from ``ecc send``) or ``agent`` (a final answer the adapter parsed),
``run`` (the run it belongs to; NULL while a follow-up waits), ``status`` (``queued``: waiting
for the session's current run to end; ``sent``: given to a run; ``received``: an answer) and
``after_seq`` (the last output line stored before its run began: where ``ecc logs`` marks it).
A part of :class:`ecc.store.base.Store`, written in the SQL both dialects accept.
"""

from __future__ import annotations

from ecc.store.models import now_iso

TYPE_CHECKING = False  # typing stays unimported here: the runner's hot path opens stores
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MAX_ANSWER_CHARS = 200_000  # an agent's answer is untrusted output: stored up to this long
MESSAGE_COLUMNS = "id, session_id, run, role, status, text, after_seq, created_at"


class Conversation:
    """The queries of the ``messages`` table; mixed into :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def transaction(self) -> Any: ...

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def queue_message(self, session_id: str, text: str) -> dict[str, Any]:
        """Record a follow-up for the session's next run (``queued``, oldest goes first)."""
        row = self._one(
            "INSERT INTO messages (session_id, role, status, text, created_at) "
            f"VALUES (?, 'user', 'queued', ?, ?) RETURNING {MESSAGE_COLUMNS}",
            (session_id, text, now_iso()),
        )
        assert row is not None
        return row

    def bind_followup(self, session_id: str) -> dict[str, Any] | None:
        """Give the oldest queued follow-up to the run about to start (``sent``, its run set by
        :meth:`begin_turn`); None when none is queued."""
        rows = self._rows(
            "UPDATE messages SET status = 'sent' WHERE id = (SELECT MIN(id) FROM messages "
            "WHERE session_id = ? AND role = 'user' AND status = 'queued') "
            f"AND status = 'queued' RETURNING {MESSAGE_COLUMNS}",
            (session_id,),
        )
        return rows[0] if rows else None

    def begin_turn(self, session_id: str, run: int, task: str, *, followup: bool) -> str | None:
        """The prompt of run ``run``, recorded where its output begins: for a follow-up, the
        message bound to it (None when there is none); else ``task``, recorded as a new turn."""
        mark = "(SELECT COALESCE(MAX(seq), 0) FROM output WHERE session_id = ?)"
        if not followup:
            self._exec(
                "INSERT INTO messages (session_id, run, role, status, text, after_seq, "
                f"created_at) VALUES (?, ?, 'user', 'sent', ?, {mark}, ?)",
                (session_id, run, task, session_id, now_iso()),
            )
            return task
        rows = self._rows(
            f"UPDATE messages SET run = ?, after_seq = {mark} WHERE id = (SELECT MAX(id) "
            "FROM messages WHERE session_id = ? AND role = 'user' AND status = 'sent' "
            "AND run IS NULL) RETURNING text",
            (run, session_id, session_id),
        )
        return str(rows[0]["text"]) if rows else None

    def add_answer(self, session_id: str, run: int, text: str, *, delta: bool = False) -> None:
        """Record an agent's final answer of run ``run``; a ``delta`` piece extends the run's
        latest answer (or starts one)."""
        if delta:
            extended = self._exec(
                "UPDATE messages SET text = SUBSTR(text || ?, 1, ?) WHERE id = (SELECT MAX(id) "
                "FROM messages WHERE session_id = ? AND run = ? AND role = 'agent')",
                (text, MAX_ANSWER_CHARS, session_id, run),
            )
            if extended:
                return
        self._exec(
            "INSERT INTO messages (session_id, run, role, status, text, created_at) "
            "VALUES (?, ?, 'agent', 'received', ?, ?)",
            (session_id, run, text[:MAX_ANSWER_CHARS], now_iso()),
        )

    def get_message(self, message_id: int) -> dict[str, Any] | None:
        return self._one(f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE id = ?", (message_id,))

    def list_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The session's turns in conversation order: run by run (each run's prompt, then its
        answers), then what has no run yet (queued follow-ups)."""
        return self._rows(
            f"SELECT {MESSAGE_COLUMNS} FROM messages WHERE session_id = ? "
            "ORDER BY CASE WHEN run IS NULL THEN 1 ELSE 0 END, run, id",
            (session_id,),
        )

    def queued_followups(self) -> list[str]:
        """Sessions whose run has ended (completed or failed) with a follow-up still queued,
        oldest message first: what :func:`ecc.sessions.manager.dispatch_queued` delivers."""
        rows = self._rows(
            "SELECT m.session_id, MIN(m.id) AS first FROM messages m JOIN sessions s "
            "ON s.id = m.session_id WHERE m.status = 'queued' "
            "AND s.state IN ('completed', 'failed') GROUP BY m.session_id ORDER BY first"
        )
        return [str(row["session_id"]) for row in rows]
