"""The ``schedules`` table (migration 9): tasks the daemon starts on a cron expression.

One row per schedule: the cron expression and its time zone, what to start (harness, profile,
task, the working directory ``ecc schedule add`` ran in), ``enabled``, ``skip_if_running`` (the
overlap policy), ``catch_up`` (migration 10: ``once`` or ``skip``), ``next_run_at`` (UTC, the
project's ISO text, so due rows are found by text comparison) and what the last run did
(``last_run_at``, ``last_session_id``, ``last_outcome``: ``started``, ``skipped`` or
``failed``, ``last_error``). The cron arithmetic lives in :mod:`ecc.sessions.schedules`; here
are only the queries, in the SQL both dialects accept. A part of :class:`ecc.store.base.Store`.
"""

from __future__ import annotations

from ecc.contract.errors import EccError
from ecc.store.models import now_iso

TYPE_CHECKING = False  # typing stays unimported here: the runner's hot path opens stores
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

SCHEDULE_COLUMNS = (
    "id, cron, timezone, harness, profile_name, task, working_dir, enabled, skip_if_running, "
    "catch_up, next_run_at, last_run_at, last_session_id, last_outcome, last_error, "
    "created_at, updated_at"
)


class UnknownSchedule(EccError):
    """No schedule has this id (or the prefix names none, or several)."""


class Schedules:
    """The queries of the ``schedules`` table; mixed into :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

    def insert_schedule(self, schedule_id: str, **fields: Any) -> dict[str, Any]:
        """Record a new schedule; ``fields`` are its columns (cron … next_run_at)."""
        stamp = now_iso()
        values = {**fields, "created_at": stamp, "updated_at": stamp}
        names = ", ".join(["id", *values])
        marks = ", ".join("?" for _ in range(len(values) + 1))
        row = self._one(
            f"INSERT INTO schedules ({names}) VALUES ({marks}) RETURNING {SCHEDULE_COLUMNS}",
            (schedule_id, *values.values()),
        )
        assert row is not None
        return row

    def list_schedules(self) -> list[dict[str, Any]]:
        return self._rows(f"SELECT {SCHEDULE_COLUMNS} FROM schedules ORDER BY created_at, id")

    def find_schedule(self, wanted: str) -> dict[str, Any]:
        """The schedule whose id is ``wanted`` or starts with it (one only), else
        :class:`UnknownSchedule`."""
        row = self._one(f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE id = ?", (wanted,))
        if row is not None:
            return row
        escaped = wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._rows(
            f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE id LIKE ? ESCAPE '\\' LIMIT 2",
            (escaped + "%",),
        )
        if len(rows) == 1 and wanted:
            return rows[0]
        if rows and wanted:
            raise UnknownSchedule(f"schedule id prefix {wanted!r} names several schedules")
        raise UnknownSchedule(f"no schedule {wanted!r} (ecc schedule list shows them)")

    def delete_schedule(self, schedule_id: str) -> bool:
        return self._exec("DELETE FROM schedules WHERE id = ?", (schedule_id,)) == 1

    def set_schedule_enabled(self, schedule_id: str, enabled: bool, next_run_at: str) -> bool:
        """Enable (from ``next_run_at``: no catch-up for the time it was off) or disable it."""
        return (
            self._exec(
                "UPDATE schedules SET enabled = ?, next_run_at = ?, updated_at = ? WHERE id = ?",
                (int(enabled), next_run_at, now_iso(), schedule_id),
            )
            == 1
        )

    def due_schedules(self, now: str, limit: int = 100) -> list[dict[str, Any]]:
        """Enabled schedules whose next run is at or before ``now``, the longest due first."""
        return self._rows(
            f"SELECT {SCHEDULE_COLUMNS} FROM schedules WHERE enabled = 1 AND next_run_at <= ? "
            "ORDER BY next_run_at, id LIMIT ?",
            (now, limit),
        )

    def claim_schedule_run(self, schedule_id: str, seen_next: str, new_next: str) -> bool:
        """Move the next run from ``seen_next`` to ``new_next``; True for the one caller whose
        update found ``seen_next`` still there (so two daemons, or a pass racing ``enable``,
        never start the same window twice)."""
        changed = self._exec(
            "UPDATE schedules SET next_run_at = ?, updated_at = ? "
            "WHERE id = ? AND next_run_at = ? AND enabled = 1",
            (new_next, now_iso(), schedule_id, seen_next),
        )
        return changed == 1

    def record_schedule_run(
        self, schedule_id: str, outcome: str, session_id: str | None, error: str | None
    ) -> None:
        """What a run did: ``started`` (with its session), ``skipped`` or ``failed`` (with why);
        a skip keeps the session it skipped for as the last one."""
        stamp = now_iso()
        self._exec(
            "UPDATE schedules SET last_run_at = ?, last_outcome = ?, last_error = ?, "
            "last_session_id = COALESCE(?, last_session_id), updated_at = ? WHERE id = ?",
            (stamp, outcome, error, session_id, stamp, schedule_id),
        )
