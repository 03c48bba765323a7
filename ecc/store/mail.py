"""Messages between sessions (``ecc messages``, the sessions MCP server) and the session tree.

The table ``mail`` holds one row per message put in a session's inbox: ``recipient_id``,
``sender_id`` (None: a person, through ``ecc messages send``), ``kind`` (``message``, or
``child_result``: what ecc posts to a parent when one of its children ends), the ``text``, a
JSON ``data`` summary, and ``read_at`` once the recipient has read it. A session's children are
the sessions whose ``parent_id`` names it. A part of :class:`ecc.store.base.Store`, written in
the SQL both dialects accept.
"""

from __future__ import annotations

import json

from ecc.store.models import Session, now_iso
from ecc.store.records import SESSION_ROWS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

MAIL_COLUMNS = "id, recipient_id, sender_id, kind, text, data, read_at, created_at"


def _mail(row: dict[str, Any]) -> dict[str, Any]:
    out = dict(row)
    out["data"] = json.loads(out["data"]) if out.get("data") else None
    return out


class Mail:
    """The queries of the ``mail`` table and of parent links; mixed into the Store."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def post_mail(
        self,
        recipient_id: str,
        text: str,
        *,
        sender_id: str | None = None,
        kind: str = "message",
        data: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Put a message in ``recipient_id``'s inbox (unread) and return it."""
        row = self._one(
            "INSERT INTO mail (recipient_id, sender_id, kind, text, data, created_at) "
            f"VALUES (?, ?, ?, ?, ?, ?) RETURNING {MAIL_COLUMNS}",
            (
                recipient_id,
                sender_id,
                kind,
                text,
                json.dumps(data, separators=(",", ":")) if data is not None else None,
                now_iso(),
            ),
        )
        assert row is not None
        return _mail(row)

    def inbox(
        self, recipient_id: str, *, unread_only: bool = False, limit: int = 100
    ) -> list[dict[str, Any]]:
        """The messages of ``recipient_id``'s inbox, oldest first (at most ``limit``)."""
        sql = f"SELECT {MAIL_COLUMNS} FROM mail WHERE recipient_id = ?"
        if unread_only:
            sql += " AND read_at IS NULL"
        rows = self._rows(sql + " ORDER BY id LIMIT ?", (recipient_id, limit))
        return [_mail(row) for row in rows]

    def mark_read(self, recipient_id: str, ids: Sequence[int]) -> int:
        """Mark the messages ``ids`` of ``recipient_id``'s inbox read; returns how many were."""
        if not ids:
            return 0
        marks = ", ".join("?" for _ in ids)
        return self._exec(
            f"UPDATE mail SET read_at = ? WHERE recipient_id = ? AND read_at IS NULL "
            f"AND id IN ({marks})",
            (now_iso(), recipient_id, *ids),
        )

    def children(self, parent_id: str) -> list[Session]:
        """The sessions ``parent_id`` started, oldest first."""
        rows = self._rows(
            f"{SESSION_ROWS} WHERE parent_id = ? ORDER BY created_at, id", (parent_id,)
        )
        return [Session.from_row(row) for row in rows]

    def family_usage(self, session_id: str) -> dict[str, Any]:
        """Tokens and cost of ``session_id`` and every session below it (its children, theirs)."""
        row = self._one(
            "WITH RECURSIVE family (id) AS (SELECT id FROM sessions WHERE id = ? "
            "UNION SELECT s.id FROM sessions s JOIN family f ON s.parent_id = f.id) "
            "SELECT COUNT(*) AS sessions, COALESCE(SUM(input_tokens), 0) AS input_tokens, "
            "COALESCE(SUM(output_tokens), 0) AS output_tokens, "
            "COALESCE(SUM(cost_usd), 0) AS cost_usd FROM sessions "
            "WHERE id IN (SELECT id FROM family)",
            (session_id,),
        )
        assert row is not None
        return row
