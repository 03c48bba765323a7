"""What sessions leave behind: output lines, events, usage, tool calls, notifications and
approvals.

A part of :class:`ecc.store.base.Store` (its plumbing runs these queries on either dialect); kept
apart from the session lifecycle so each module has one job.
"""

from __future__ import annotations

import json

from ecc.store.models import now_iso

TYPE_CHECKING = False  # typing stays unimported here: ``ecc hook`` records tool calls
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any


class Records:
    """The queries of the ``output``, ``events``, ``tool_calls``, ``notifications`` and
    ``approvals`` tables and the usage totals of ``sessions``; mixed into
    :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def transaction(self) -> Any: ...

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

        def _insert_output(self, rows: Sequence[tuple[str, int, str, str, str]]) -> None: ...

        def _serialise(self, name: str) -> None: ...

    # -- output ----------------------------------------------------------------------------

    def append_output(self, session_id: str, rows: Sequence[tuple[int, str, str, str]]) -> None:
        """Insert captured lines ``(seq, stream, ts, line)`` in one transaction."""
        if not rows:
            return
        with self.transaction():
            self._insert_output([(session_id, *row) for row in rows])

    def max_seq(self, session_id: str) -> int:
        row = self._one("SELECT MAX(seq) AS m FROM output WHERE session_id = ?", (session_id,))
        return int(row["m"]) if row and row["m"] is not None else 0

    def read_output(
        self,
        session_id: str,
        *,
        after_seq: int = 0,
        stream: str | None = None,
        limit: int | None = None,
    ) -> list[dict[str, Any]]:
        """Lines with ``seq > after_seq`` in order: dicts with seq, stream, ts, line."""
        sql = "SELECT seq, stream, ts, line FROM output WHERE session_id = ? AND seq > ?"
        params: list[Any] = [session_id, after_seq]
        if stream:
            sql += " AND stream = ?"
            params.append(stream)
        sql += " ORDER BY seq"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return self._rows(sql, params)

    def tail_output(
        self, session_id: str, count: int, stream: str | None = None
    ) -> list[dict[str, Any]]:
        sql = "SELECT seq, stream, ts, line FROM output WHERE session_id = ?"
        params: list[Any] = [session_id]
        if stream:
            sql += " AND stream = ?"
            params.append(stream)
        sql += " ORDER BY seq DESC LIMIT ?"
        params.append(count)
        return list(reversed(self._rows(sql, params)))

    def nth_last_seq(self, session_id: str, count: int, stream: str | None = None) -> int | None:
        """The seq of the ``count``-th last line (None if fewer): where a tail starts, unread."""
        sql = "SELECT seq FROM output WHERE session_id = ?"
        params: list[Any] = [session_id]
        if stream:
            sql += " AND stream = ?"
            params.append(stream)
        sql += " ORDER BY seq DESC LIMIT 1 OFFSET ?"
        params.append(max(0, count - 1))
        row = self._one(sql, params)
        return int(row["seq"]) if row else None

    def count_output(self, session_id: str) -> int:
        row = self._one("SELECT COUNT(*) AS n FROM output WHERE session_id = ?", (session_id,))
        return int(row["n"]) if row else 0

    # -- events ----------------------------------------------------------------------------

    def _event(
        self,
        session_id: str,
        kind: str,
        from_state: str | None,
        to_state: str | None,
        reason: str,
        data: dict[str, Any] | None,
        now: str,
    ) -> None:
        self._exec(
            "INSERT INTO events (session_id, kind, from_state, to_state, reason, data_json, "
            "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                session_id,
                kind,
                from_state,
                to_state,
                reason,
                json.dumps(data, default=str) if data else None,
                now,
            ),
        )

    def add_event(
        self, session_id: str, kind: str, reason: str, data: dict[str, Any] | None = None
    ) -> None:
        """Record something that happened to a session without changing its state."""
        self._event(session_id, kind, None, None, reason, data, now_iso())

    def list_events(self, session_id: str) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT kind, from_state, to_state, reason, data_json, created_at FROM events "
            "WHERE session_id = ? ORDER BY id",
            (session_id,),
        )
        for row in rows:
            raw = row.pop("data_json")
            row["data"] = json.loads(raw) if raw else None
        return rows

    # -- usage, tool calls and notifications (used by risk, hooks, notify and budgets) -----

    def add_usage(
        self, session_id: str, input_tokens: int = 0, output_tokens: int = 0, cost_usd: float = 0.0
    ) -> bool:
        """Add (never overwrite) token and cost use to a session's running totals."""
        return (
            self._exec(
                "UPDATE sessions SET input_tokens = input_tokens + ?, "
                "output_tokens = output_tokens + ?, cost_usd = cost_usd + ?, updated_at = ? "
                "WHERE id = ?",
                (int(input_tokens), int(output_tokens), float(cost_usd), now_iso(), session_id),
            )
            == 1
        )

    def usage_totals(self, since: str | None = None) -> dict[str, Any]:
        """Summed tokens and cost over sessions created at or after ``since`` (ISO), or all."""
        sql = (
            "SELECT COUNT(*) AS sessions, COALESCE(SUM(input_tokens), 0) AS input_tokens, "
            "COALESCE(SUM(output_tokens), 0) AS output_tokens, "
            "COALESCE(SUM(cost_usd), 0) AS cost_usd FROM sessions"
        )
        params: tuple[Any, ...] = ()
        if since:
            sql += " WHERE created_at >= ?"
            params = (since,)
        row = self._one(sql, params)
        assert row is not None
        return row

    def record_tool_call(
        self,
        *,
        session_id: str | None,
        harness: str,
        tool: str,
        input: Any,
        score: float | None = None,
        action: str | None = None,
        reasons: Sequence[str] = (),
        decision: str | None = None,
        call_id: str | None = None,
        source: str = "hook",
    ) -> int:
        """Record one tool call seen by ``source`` (``hook``: ``ecc hook`` scored and decided
        it; ``output``: parsed from the harness's output), merged into the row of the same call
        the other side recorded first: one row per call, whichever arrives first. Returns the
        row's id; an unknown ``session_id`` is stored as unattached (never merged).

        The same call is the session's row with the harness's ``call_id``, else the latest row
        of the same tool and input only the other side recorded (a harness whose hook and output
        ids differ, or one side without an id). The hook's tool, input, score and decision win:
        they are what the harness was told. A merged row takes a new id (highest, so watchers
        that follow the highest id see the change) and keeps when the call was first seen.
        """
        input_json = json.dumps(input, sort_keys=True, default=str)  # a str stays a JSON string
        incoming: dict[str, Any] = {
            "harness": harness,
            "tool": tool,
            "input_json": input_json,
            "score": score,
            "action": action,
            "reasons_json": json.dumps(list(reasons)),
            "decision": decision,
            "call_id": str(call_id) if call_id not in (None, "") else None,
            "source": source,
            "created_at": now_iso(),
        }
        with self.transaction():
            if (
                session_id is not None
                and self._one("SELECT id FROM sessions WHERE id = ?", (session_id,)) is None
            ):
                session_id = None
            row, same = incoming, None
            if session_id is not None:
                self._serialise(f"tool_calls:{session_id}")  # racing hook and runner: one row
                same = self._same_call(session_id, incoming)
                if same is not None:
                    row = _merged(same, incoming)
                    if row is same:  # the same side saw it again (a line stored twice)
                        return int(same["id"])
            inserted = self._one(
                "INSERT INTO tool_calls (session_id, harness, tool, input_json, score, action, "
                "reasons_json, decision, call_id, source, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (session_id, *(row[name] for name in _TOOL_CALL_FIELDS)),
            )
            if same is not None:  # after the insert: SQLite would reuse a deleted highest id
                self._exec("DELETE FROM tool_calls WHERE id = ?", (same["id"],))
        assert inserted is not None
        return int(inserted["id"])

    def _same_call(self, session_id: str, incoming: dict[str, Any]) -> dict[str, Any] | None:
        """The session's row of the call ``incoming`` describes, or None (see
        :meth:`record_tool_call`)."""
        if incoming["call_id"] is not None:
            row = self._one(
                "SELECT * FROM tool_calls WHERE session_id = ? AND call_id = ? "
                "ORDER BY id DESC LIMIT 1",
                (session_id, incoming["call_id"]),
            )
            if row is not None:
                return row
        other = "output" if incoming["source"] == "hook" else "hook"
        return self._one(
            "SELECT * FROM tool_calls WHERE session_id = ? AND source = ? AND tool = ? "
            "AND input_json = ? ORDER BY id DESC LIMIT 1",
            (session_id, other, incoming["tool"], incoming["input_json"]),
        )

    def list_tool_calls(
        self, session_id: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Tool calls of one session (or all, when None), oldest first."""
        sql = "SELECT * FROM tool_calls"
        params: list[Any] = []
        if session_id is not None:
            sql += " WHERE session_id = ?"
            params.append(session_id)
        sql += " ORDER BY id"
        if limit is not None:
            sql = f"SELECT * FROM ({sql} DESC LIMIT ?) AS recent ORDER BY id"
            params.append(limit)
        rows = self._rows(sql, params)
        for row in rows:
            row["reasons"] = json.loads(row.pop("reasons_json") or "[]")
        return rows

    def tool_call_summary(self) -> dict[str, dict[str, Any]]:
        """Per session: number of tool calls, highest score, denied and asked counts, last id."""
        rows = self._rows(
            "SELECT session_id, COUNT(*) AS calls, MAX(score) AS max_score, "
            "COALESCE(SUM(CASE WHEN decision = 'deny' THEN 1 ELSE 0 END), 0) AS denied, "
            "COALESCE(SUM(CASE WHEN decision = 'ask' THEN 1 ELSE 0 END), 0) AS asked, "
            "MAX(id) AS last_id FROM tool_calls WHERE session_id IS NOT NULL GROUP BY session_id"
        )
        return {row.pop("session_id"): row for row in rows}

    def record_notification(
        self,
        *,
        event: str,
        session_id: str | None,
        title: str,
        body: str,
        data: dict[str, Any] | None = None,
    ) -> int:
        if (
            session_id is not None
            and self._one("SELECT id FROM sessions WHERE id = ?", (session_id,)) is None
        ):
            session_id = None
        row = self._one(
            "INSERT INTO notifications (event, session_id, title, body, data_json, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
            (event, session_id, title, body, json.dumps(data or {}, default=str), now_iso()),
        )
        assert row is not None
        return int(row["id"])

    def list_notifications(self, limit: int = 50) -> list[dict[str, Any]]:
        rows = self._rows(
            "SELECT * FROM (SELECT * FROM notifications ORDER BY id DESC LIMIT ?) AS recent "
            "ORDER BY id",
            (limit,),
        )
        for row in rows:
            row["data"] = json.loads(row.pop("data_json") or "{}")
        return rows

    # -- approvals: tool calls held for a person's decision (ecc.observability.approvals) -----

    def create_approval(
        self,
        approval_id: str,
        *,
        session_id: str,
        harness: str,
        tool: str,
        input_excerpt: str,
        score: float | None,
        action: str,
        reasons: Sequence[str],
        timeout_secs: float,
        on_timeout: str,
    ) -> dict[str, Any] | None:
        """Record a held call of session ``session_id``, undecided until ``timeout_secs`` from
        now (then ``on_timeout``), and touch the session so watchers re-read it as waiting.
        None, with nothing written, when there is no such session."""
        import time

        from ecc.store.models import iso_from_epoch

        started = time.time()
        created_at, expires_at = iso_from_epoch(started), iso_from_epoch(started + timeout_secs)
        with self.transaction():
            touched = self._exec(
                "UPDATE sessions SET updated_at = ? WHERE id = ?", (created_at, session_id)
            )
            if touched != 1:
                return None
            self._exec(
                "INSERT INTO approvals (id, session_id, harness, tool, input_excerpt, score, "
                "action, reasons_json, created_at, expires_at, on_timeout) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    approval_id,
                    session_id,
                    harness,
                    tool,
                    input_excerpt,
                    score,
                    action,
                    json.dumps(list(reasons)),
                    created_at,
                    expires_at,
                    on_timeout,
                ),
            )
        return self.get_approval(approval_id)

    def get_approval(self, approval_id: str) -> dict[str, Any] | None:
        row = self._one("SELECT * FROM approvals WHERE id = ?", (approval_id,))
        return _approval(row) if row else None

    def approvals_with_prefix(self, prefix: str, limit: int = 2) -> list[dict[str, Any]]:
        """Approvals whose id starts with ``prefix``, oldest first."""
        escaped = prefix.replace("!", "!!").replace("%", "!%").replace("_", "!_")
        rows = self._rows(
            "SELECT * FROM approvals WHERE id LIKE ? ESCAPE '!' ORDER BY created_at, id LIMIT ?",
            (escaped + "%", limit),
        )
        return [_approval(row) for row in rows]

    def list_approvals(
        self, *, pending: bool = True, session_id: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """Approvals oldest first: the undecided ones still in time, or (``pending=False``)
        every one, decided or not; of one session when ``session_id`` is given."""
        sql = "SELECT * FROM approvals"
        where: list[str] = []
        params: list[Any] = []
        if pending:
            where.append("decision IS NULL AND expires_at > ?")
            params.append(now_iso())
        if session_id is not None:
            where.append("session_id = ?")
            params.append(session_id)
        if where:
            sql += " WHERE " + " AND ".join(where)
        if limit is None:
            rows = self._rows(sql + " ORDER BY created_at, id", params)
        else:  # the newest ``limit``, still oldest first
            rows = self._rows(sql + " ORDER BY created_at DESC, id DESC LIMIT ?", [*params, limit])
            rows.reverse()
        return [_approval(row) for row in rows]

    def decide_approval(
        self, approval_id: str, decision: str, decided_by: str, reason: str
    ) -> bool:
        """Decide an undecided approval still in time; False when it was decided (or timed
        out) first. Only one decision is ever recorded."""
        now = now_iso()
        with self.transaction():
            rows = self._rows(
                "UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ?, reason = ? "
                "WHERE id = ? AND decision IS NULL AND expires_at > ? RETURNING session_id",
                (decision, decided_by, now, reason, approval_id, now),
            )
            self._touch_sessions([row["session_id"] for row in rows], now)
        return bool(rows)

    def expire_approvals(self) -> list[str]:
        """Give each overdue undecided approval its ``on_timeout`` decision (decided by
        ``timeout``); returns their ids."""
        now = now_iso()
        with self.transaction():
            rows = self._rows(
                "UPDATE approvals SET decision = on_timeout, decided_by = 'timeout', "
                "decided_at = ?, reason = 'no decision in time' "
                "WHERE decision IS NULL AND expires_at <= ? RETURNING id, session_id",
                (now, now),
            )
            self._touch_sessions([row["session_id"] for row in rows], now)
        return sorted(row["id"] for row in rows)

    def _touch_sessions(self, session_ids: Sequence[str | None], now: str) -> None:
        """Move the sessions' ``updated_at``: their waiting state changed (watchers re-read)."""
        for session_id in {sid for sid in session_ids if sid}:
            self._exec("UPDATE sessions SET updated_at = ? WHERE id = ?", (now, session_id))


# Every session read carries its oldest undecided approval (``Session.pending_approval``): what
# the views show as ``waiting``; and its oldest open conflict incident (``open_conflict``).
SESSION_ROWS = (
    "SELECT sessions.*, (SELECT a.id FROM approvals a WHERE a.session_id = sessions.id "
    "AND a.decision IS NULL ORDER BY a.created_at, a.id LIMIT 1) AS pending_approval, "
    "(SELECT c.id FROM conflicts c WHERE c.status IN ('open', 'paused') AND "
    "(c.first_session = sessions.id OR c.second_session = sessions.id) ORDER BY c.id LIMIT 1) "
    "AS open_conflict "
    "FROM sessions"
)


# The columns of a tool call row after its session, in the order ``record_tool_call`` inserts.
_TOOL_CALL_FIELDS = (
    "harness",
    "tool",
    "input_json",
    "score",
    "action",
    "reasons_json",
    "decision",
    "call_id",
    "source",
    "created_at",
)
_HOOK_FIELDS = ("harness", "tool", "input_json", "score", "action", "reasons_json", "decision")


def _merged(same: dict[str, Any], incoming: dict[str, Any]) -> dict[str, Any]:
    """The one row of a call ``same`` recorded and ``incoming`` saw too; ``same`` itself when
    the incoming output adds nothing (the output saw it again, or the hook had it)."""
    sides = {same.get("source") or "hook", incoming["source"]}
    source = "both" if len(sides) > 1 or "both" in sides else incoming["source"]
    if incoming["source"] == "output" and source == (same.get("source") or "hook"):
        return same
    row = dict(same)
    if incoming["source"] == "hook":  # what the harness was told wins
        row.update({name: incoming[name] for name in _HOOK_FIELDS})
    row["source"] = source
    row["call_id"] = same.get("call_id") or incoming["call_id"]
    return row


def _approval(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["reasons"] = json.loads(out.pop("reasons_json") or "[]")
    return out
