"""The ``conflicts`` table (migration 11): incidents of two sessions changing the same file.

One row per (repository, path, session pair), the pair stored in id order so each incident
exists once: :meth:`Conflicts.open_conflict` is one conditional insert, so of two daemons (or
a restart) only one ever acts on an incident. A row records the strategy applied, which
session was paused and which kept, its ``status`` (``open``: found, nobody paused; ``paused``:
one session paused until the other is done; ``resumed``: the paused one was started again
when the other was merged or removed, or someone resumed it by hand; ``resolved``/``dismissed``:
a person closed it, or the paused session was removed) and why.
The policy lives in :mod:`ecc.sessions.conflicts`; here are only the queries.
A part of :class:`ecc.store.base.Store`.
"""

from __future__ import annotations

from ecc.contract.errors import EccError
from ecc.store.models import now_iso

TYPE_CHECKING = False  # typing stays unimported here: the runner's hot path opens stores
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

CONFLICT_COLUMNS = (
    "id, repo, path, first_session, second_session, strategy, paused_session, kept_session, "
    "status, reason, resolution, created_at, updated_at"
)
OPEN_STATUSES = ("open", "paused")  # an incident still needing something to happen
STATUSES = (*OPEN_STATUSES, "resumed", "resolved", "dismissed")


class UnknownConflict(EccError):
    """No conflict incident has this id."""


class Conflicts:
    """The queries of the ``conflicts`` table; mixed into :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def open_conflict(
        self, repo: str, path: str, sessions: tuple[str, str], strategy: str, reason: str
    ) -> dict[str, Any] | None:
        """Record the incident of ``sessions`` both changing ``path`` in ``repo``; the new row,
        or None when it was recorded before (by this daemon or another): only one caller acts."""
        first, second = sorted(sessions)
        stamp = now_iso()
        return self._one(
            "INSERT INTO conflicts (repo, path, first_session, second_session, strategy, "
            "status, reason, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 'open', ?, ?, ?) "
            "ON CONFLICT (repo, path, first_session, second_session) DO NOTHING "
            f"RETURNING {CONFLICT_COLUMNS}",
            (repo, path, first, second, strategy, reason, stamp, stamp),
        )

    def known_conflicts(self, repo: str) -> set[tuple[str, str, str]]:
        """(path, first, second) of every incident ever recorded in ``repo``."""
        rows = self._rows(
            "SELECT path, first_session, second_session FROM conflicts WHERE repo = ?", (repo,)
        )
        return {(r["path"], r["first_session"], r["second_session"]) for r in rows}

    def list_conflicts(
        self, *, open_only: bool = False, session_id: str | None = None
    ) -> list[dict[str, Any]]:
        """Incidents, oldest first: all, the open ones, and/or those of one session."""
        where, params = [], []
        if open_only:
            where.append("status IN (?, ?)")
            params += list(OPEN_STATUSES)
        if session_id is not None:
            where.append("(first_session = ? OR second_session = ?)")
            params += [session_id, session_id]
        clause = (" WHERE " + " AND ".join(where)) if where else ""
        return self._rows(
            f"SELECT {CONFLICT_COLUMNS} FROM conflicts{clause} ORDER BY id", tuple(params)
        )

    def get_conflict(self, conflict_id: int) -> dict[str, Any]:
        row = self._one(f"SELECT {CONFLICT_COLUMNS} FROM conflicts WHERE id = ?", (conflict_id,))
        if row is None:
            raise UnknownConflict(f"no conflict {conflict_id} (ecc conflicts lists them)")
        return row

    def settle_conflict(
        self,
        conflict_id: int,
        status: str,
        *,
        expect: Sequence[str] = OPEN_STATUSES,
        paused: str | None = None,
        kept: str | None = None,
        resolution: str | None = None,
    ) -> bool:
        """Move an incident from one of ``expect`` to ``status`` (compare-and-set: False when
        another process moved it first), recording who was paused and kept, and why."""
        if status not in STATUSES:
            raise ValueError(f"unknown conflict status {status!r}")
        marks = ", ".join("?" for _ in expect)
        changed = self._exec(
            "UPDATE conflicts SET status = ?, paused_session = COALESCE(?, paused_session), "
            "kept_session = COALESCE(?, kept_session), resolution = COALESCE(?, resolution), "
            f"updated_at = ? WHERE id = ? AND status IN ({marks})",
            (status, paused, kept, resolution, now_iso(), conflict_id, *expect),
        )
        return changed == 1
