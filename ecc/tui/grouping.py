"""Groups in the sessions table: a group of sessions (``ecc run --count``, ``--template``) is one
row, keyed ``group:<id>``, that Enter opens into its members' rows and closes again.

The group row shows the group's id behind ``▸`` (``▾`` when open), one state for all (running
while a member is active, else completed when every member completed, else failed), the
members' harnesses, how many they are and their task, the first member's age and the members'
summed tokens and cost. Which sessions belong to which group is asked of the store
(:meth:`ecc.store.groups.Groups.group_ids_of`) once per session, and again while a session is
young (its group records it just after creating it).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ecc.runtime.money import format_cost
from ecc.sessions.groups import sessions_state
from ecc.store.models import age_seconds
from ecc.tui import data

if TYPE_CHECKING:
    from datetime import datetime

    from ecc.store.base import Store
    from ecc.store.models import Session

PREFIX = "group:"
YOUNG_SECS = 60.0  # a session this young may still be joined to its group: ask again


@dataclass(frozen=True)
class Row:
    """One row of the table: a session (``session``), or a group (``members``)."""

    key: str
    session: Session | None = None
    group: str | None = None  # a group row's id, or the group of a member shown under it
    members: tuple[Session, ...] = ()


def group_key(key: str | None) -> str | None:
    """The group id of a group row's key, else None."""
    return key[len(PREFIX) :] if key and key.startswith(PREFIX) else None


class Membership:
    """Which group each session belongs to, asked of the store as rarely as it can be."""

    def __init__(self) -> None:
        self.group_of: dict[str, str | None] = {}

    def update(self, store: Store, sessions: list[Session]) -> None:
        unknown = [
            s.id
            for s in sessions
            if self.group_of.get(s.id) is None
            and (s.id not in self.group_of or (age_seconds(s.created_at) or 0.0) < YOUNG_SECS)
        ]
        if not unknown:
            return
        found = store.group_ids_of(unknown)
        for session_id in unknown:
            self.group_of[session_id] = found.get(session_id)


def layout(sessions: list[Session], group_of: dict[str, str | None], opened: set[str]) -> list[Row]:
    """The table's rows for ``sessions`` (in their order): each group once, where its newest
    member would be, followed by its members (oldest first) when it is open."""
    members: dict[str, list[Session]] = {}
    for session in sessions:
        gid = group_of.get(session.id)
        if gid is not None:
            members.setdefault(gid, []).append(session)
    rows: list[Row] = []
    for session in sessions:
        gid = group_of.get(session.id)
        if gid is None:
            rows.append(Row(session.id, session))
            continue
        if gid not in members:
            continue  # already placed
        own = sorted(members.pop(gid), key=lambda s: (s.created_at, s.id))
        rows.append(Row(PREFIX + gid, group=gid, members=tuple(own)))
        if gid in opened:
            rows.extend(Row(member.id, member, gid) for member in own)
    return rows


def cells(row: Row, opened: bool, now: datetime, width: int) -> dict[str, Text]:
    """The cells of a group row, keyed by column as :func:`ecc.tui.data.row_cells` keys them."""
    members = row.members
    state = sessions_state(members)
    harnesses = ",".join(dict.fromkeys(member.harness for member in members))
    tokens = sum(member.input_tokens + member.output_tokens for member in members)
    first: Any = members[0]
    task = f"group of {len(members)}: {first.task}"
    return {
        "id": Text(("▾ " if opened else "▸ ") + str(row.group)),
        "state": Text(state, style=data.STATE_STYLES.get(state, "")),
        "harness": Text(data.one_line(harnesses)),
        "task": Text(data.one_line(task, width)),
        "age": Text(data.age_text(first, now)),
        "worktree": Text(f"{sum(1 for m in members if m.worktree_path)} worktrees"),
        "tokens": Text(data.fmt_tokens(tokens), justify="right"),
        "cost": Text(format_cost(sum(m.cost_usd for m in members)), justify="right"),
        "risk": Text(""),
    }
