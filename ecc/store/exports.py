"""The ``exports`` table: which finished sessions each exporter plugin has delivered.

One row per (exporter, session): the session's ``ended_at`` at the time it was delivered and
when. A session is due for an exporter while it is terminal and has no row of that exporter
with its current ``ended_at``, so a session resumed and ended again is due once more, and a
delivery that failed stays due. What an export sends and when is
:mod:`ecc.observability.exports`'s; here are only the queries, in the SQL both dialects accept.
A part of :class:`ecc.store.base.Store`.
"""

from __future__ import annotations

from ecc.store.models import Session, now_iso
from ecc.store.records import SESSION_ROWS

TYPE_CHECKING = False  # typing stays unimported here: the runner's hot path opens stores
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

_FINISHED = "sessions.state IN ('completed', 'failed', 'stopped') AND sessions.ended_at IS NOT NULL"


class Exports:
    """The queries of the ``exports`` table; mixed into :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def transaction(self) -> Any: ...

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def sessions_to_export(
        self,
        exporter: str,
        *,
        since: str | None = None,
        again: bool = False,
        ids: Iterable[str] | None = None,
        limit: int = 100,
    ) -> list[Session]:
        """Finished sessions ``exporter`` has not delivered (as they ended), oldest end first.

        ``since`` keeps those that ended at or after it (ISO text); ``again`` includes the ones
        already delivered; ``ids`` keeps only those sessions.
        """
        sql = f"{SESSION_ROWS} WHERE {_FINISHED}"
        params: list[Any] = []
        if not again:
            sql += (
                " AND NOT EXISTS (SELECT 1 FROM exports e WHERE e.exporter = ? "
                "AND e.session_id = sessions.id AND e.ended_at = sessions.ended_at)"
            )
            params.append(exporter)
        if since:
            sql += " AND sessions.ended_at >= ?"
            params.append(since)
        if ids is not None:
            wanted = sorted(set(ids))
            if not wanted:
                return []
            sql += f" AND sessions.id IN ({', '.join('?' for _ in wanted)})"
            params += wanted
        sql += " ORDER BY sessions.ended_at, sessions.id LIMIT ?"
        params.append(limit)
        return [Session.from_row(row) for row in self._rows(sql, params)]

    def mark_exported(self, exporter: str, ended: Sequence[tuple[str, str]]) -> None:
        """Record that ``exporter`` delivered these ``(session id, ended_at)`` pairs."""
        if not ended:
            return
        now = now_iso()
        with self.transaction():
            for session_id, ended_at in ended:
                self._exec(
                    "INSERT INTO exports (exporter, session_id, ended_at, exported_at) "
                    "SELECT ?, id, ?, ? FROM sessions WHERE id = ? "
                    "ON CONFLICT (exporter, session_id) DO UPDATE SET "
                    "ended_at = excluded.ended_at, exported_at = excluded.exported_at",
                    (exporter, ended_at, now, session_id),
                )

    def export_marks(self, session_id: str) -> dict[str, str]:
        """``{exporter: ended_at delivered}`` for one session."""
        rows = self._rows(
            "SELECT exporter, ended_at FROM exports WHERE session_id = ? ORDER BY exporter",
            (session_id,),
        )
        return {row["exporter"]: row["ended_at"] for row in rows}
