"""The ``session_groups`` and ``group_members`` tables: sessions started together on one task.

A group is what ``ecc run --count N``, ``--harness a,b`` or ``--template NAME`` starts: its kind
(``fanout``, ``set``, ``sequence``), the template it came from, the directory it started in and
the executor asked for (so a sequence's later steps run where its first did),
the check command run in each member's worktree when the member ends (with its timeout) and,
once one is picked, the member picked. A member is one position of the group: the task (already
resolved), harness, profile and worktree choice it starts with, its ``status`` (``waiting``: a
sequence step not started yet; ``starting``: claimed by one process; ``started``, with its
``session_id``; ``skipped`` or ``failed``, with a ``note``), and its check result
(``check_state``: ``running``, ``passed``, ``failed``, ``timeout``, ``error``; the exit code, the
seconds it took and a bounded tail of its output). The orchestration lives in
:mod:`ecc.sessions.groups`; here are only the queries. A part of :class:`ecc.store.base.Store`.
"""

from __future__ import annotations

from ecc.contract.errors import EccError
from ecc.store.models import now_iso

TYPE_CHECKING = False  # typing stays unimported here: the runner's hot path opens stores
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

GROUP_COLUMNS = (
    "id, name, kind, template, project_dir, check_command, check_timeout_secs, executor, "
    "picked_session_id, picked_at, created_at, updated_at"
)
MEMBER_COLUMNS = (
    "group_id, position, step_name, session_id, status, note, task, harness, profile_name, "
    "use_worktree, check_state, check_exit_code, check_seconds, check_output, updated_at"
)
MEMBER_FIELDS = frozenset(
    {"step_name", "session_id", "status", "note", "task", "harness", "profile_name"}
    | {"use_worktree", "check_state", "check_exit_code", "check_seconds", "check_output"}
)


class UnknownGroup(EccError):
    """No group has this id (or the prefix names none, or several)."""


class Groups:
    """The queries of the group tables; mixed into :class:`ecc.store.base.Store`."""

    if TYPE_CHECKING:  # the plumbing ecc.store.base.Store declares and a dialect provides
        from contextlib import AbstractContextManager

        def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]: ...

        def _one(self, sql: str, params: Sequence[Any] = ()) -> dict[str, Any] | None: ...

        def _exec(self, sql: str, params: Sequence[Any] = ()) -> int: ...

        def transaction(self) -> AbstractContextManager[None]: ...

    def insert_group(
        self, group_id: str, members: Sequence[dict[str, Any]], **fields: Any
    ) -> dict[str, Any] | None:
        """Record a group and its members in one transaction; None when the id is taken."""
        stamp = now_iso()
        values = {**fields, "created_at": stamp, "updated_at": stamp}
        names = ", ".join(["id", *values])
        marks = ", ".join("?" for _ in range(len(values) + 1))
        with self.transaction():
            inserted = self._exec(
                f"INSERT INTO session_groups ({names}) VALUES ({marks}) "
                "ON CONFLICT (id) DO NOTHING",
                (group_id, *values.values()),
            )
            if inserted != 1:
                return None
            for position, member in enumerate(members, start=1):
                row = {**member, "updated_at": stamp}
                unknown = set(member) - MEMBER_FIELDS
                if unknown:
                    raise ValueError(f"unknown member columns: {sorted(unknown)}")
                cols = ", ".join(["group_id", "position", *row])
                qs = ", ".join("?" for _ in range(len(row) + 2))
                self._exec(
                    f"INSERT INTO group_members ({cols}) VALUES ({qs})",
                    (group_id, position, *row.values()),
                )
        return self.get_group(group_id)

    def get_group(self, group_id: str) -> dict[str, Any] | None:
        """The group with its ``members`` (by position), or None."""
        row = self._one(f"SELECT {GROUP_COLUMNS} FROM session_groups WHERE id = ?", (group_id,))
        if row is None:
            return None
        row["members"] = self._rows(
            f"SELECT {MEMBER_COLUMNS} FROM group_members WHERE group_id = ? ORDER BY position",
            (group_id,),
        )
        return row

    def find_group(self, wanted: str) -> dict[str, Any]:
        """The group whose id is ``wanted`` or starts with it (one only), else
        :class:`UnknownGroup`."""
        wanted = wanted.strip()
        found = self.get_group(wanted) if wanted else None
        if found is not None:
            return found
        escaped = wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        rows = self._rows(
            "SELECT id FROM session_groups WHERE id LIKE ? ESCAPE '\\' ORDER BY id LIMIT 2",
            (escaped + "%",),
        )
        if len(rows) == 1 and wanted:
            group = self.get_group(rows[0]["id"])
            assert group is not None
            return group
        if rows and wanted:
            raise UnknownGroup(f"group id prefix {wanted!r} names several groups")
        raise UnknownGroup(f"no group {wanted!r} (ecc groups lists them)")

    def list_groups(self, limit: int = 100) -> list[dict[str, Any]]:
        """The newest groups first, each with its members."""
        rows = self._rows(
            f"SELECT {GROUP_COLUMNS} FROM session_groups ORDER BY created_at DESC, id LIMIT ?",
            (limit,),
        )
        for row in rows:
            row["members"] = self._rows(
                f"SELECT {MEMBER_COLUMNS} FROM group_members WHERE group_id = ? ORDER BY position",
                (row["id"],),
            )
        return rows

    def group_ids_of(self, session_ids: Sequence[str]) -> dict[str, str]:
        """Which group each of ``session_ids`` belongs to (those in none are left out)."""
        found: dict[str, str] = {}
        for start in range(0, len(session_ids), 500):  # well within every dialect's limit
            chunk = tuple(session_ids[start : start + 500])
            marks = ", ".join("?" for _ in chunk)
            rows = self._rows(
                f"SELECT session_id, group_id FROM group_members WHERE session_id IN ({marks})",
                chunk,
            )
            found.update((row["session_id"], row["group_id"]) for row in rows)
        return found

    def member_check(self, session_id: str) -> dict[str, Any] | None:
        """The check a member session runs when it ends: ``group_id``, ``position``,
        ``check_command``, ``check_timeout_secs``; None for a session without one."""
        return self._one(
            "SELECT m.group_id, m.position, g.check_command, g.check_timeout_secs "
            "FROM group_members m JOIN session_groups g ON g.id = m.group_id "
            "WHERE m.session_id = ? AND g.check_command IS NOT NULL AND g.check_command <> ''",
            (session_id,),
        )

    def update_member(
        self, group_id: str, position: int, *, expect: str | None = None, **fields: Any
    ) -> bool:
        """Set ``fields`` of one member; with ``expect``, only while its status is that (a
        claim: True for the one caller that found it)."""
        unknown = set(fields) - MEMBER_FIELDS
        if unknown:
            raise ValueError(f"unknown member columns: {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in [*fields, "updated_at"])
        sql = f"UPDATE group_members SET {sets} WHERE group_id = ? AND position = ?"
        params: list[Any] = [*fields.values(), now_iso(), group_id, position]
        if expect is not None:
            sql += " AND status = ?"
            params.append(expect)
        return self._exec(sql, params) == 1

    def groups_waiting(self) -> list[str]:
        """Ids of the groups with a member still waiting to start (sequences), oldest first."""
        rows = self._rows(
            "SELECT DISTINCT g.id, g.created_at FROM session_groups g "
            "JOIN group_members m ON m.group_id = g.id WHERE m.status = 'waiting' "
            "ORDER BY g.created_at, g.id"
        )
        return [row["id"] for row in rows]

    def stale_claims(self, before: str) -> list[tuple[str, int]]:
        """(group id, position) of the members claimed (``starting``) and not touched since
        ``before``."""
        rows = self._rows(
            "SELECT group_id, position FROM group_members "
            "WHERE status = 'starting' AND updated_at < ? ORDER BY group_id, position",
            (before,),
        )
        return [(row["group_id"], int(row["position"])) for row in rows]

    def record_pick(self, group_id: str, session_id: str) -> bool:
        """Mark ``session_id`` as the group's pick; False when another was picked first."""
        stamp = now_iso()
        return (
            self._exec(
                "UPDATE session_groups SET picked_session_id = ?, picked_at = ?, updated_at = ? "
                "WHERE id = ? AND picked_session_id IS NULL",
                (session_id, stamp, stamp, group_id),
            )
            == 1
        )
