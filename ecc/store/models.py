"""Session states, the one transition table, and the plain record read back from the store.

Every state change in ecc goes through :func:`check_transition` (called by the store's
``transition``), and every accepted change is written as an event with a reason. Nothing else may
decide whether a move is legal.
"""

from __future__ import annotations

import json
import time
from enum import StrEnum

from ecc.contract.errors import EccError
from ecc.contract.plain import factory, plain  # a dataclass without importing dataclasses

TYPE_CHECKING = False  # ecc hook records through the store: typing stays unimported
if TYPE_CHECKING:
    from collections.abc import Iterable
    from datetime import datetime
    from typing import Any


class State(StrEnum):
    QUEUED = "queued"  # waiting for a worktree/session slot
    PENDING = "pending"  # created (or resumed); its runner has not started the harness yet
    RUNNING = "running"  # the harness process has been spawned
    STALE = "stale"  # the runner's heartbeat is overdue; it may still be alive
    COMPLETED = "completed"  # the harness exited 0
    FAILED = "failed"  # non-zero exit, signal, spawn error, or a runner that died
    STOPPED = "stopped"  # stopped on request


# A display state, not a State: a running session whose tool call waits for ``ecc approve``.
WAITING = "waiting"

ACTIVE: frozenset[State] = frozenset({State.QUEUED, State.PENDING, State.RUNNING, State.STALE})
TERMINAL: frozenset[State] = frozenset({State.COMPLETED, State.FAILED, State.STOPPED})

# from -> allowed destinations. Terminal states leave only through an explicit resume
# (failed/stopped -> pending); completed is final.
TRANSITIONS: dict[State, frozenset[State]] = {
    State.PENDING: frozenset({State.QUEUED, State.RUNNING, State.FAILED, State.STOPPED}),
    State.QUEUED: frozenset({State.PENDING, State.RUNNING, State.FAILED, State.STOPPED}),
    State.RUNNING: frozenset({State.COMPLETED, State.FAILED, State.STOPPED, State.STALE}),
    State.STALE: frozenset({State.RUNNING, State.COMPLETED, State.FAILED, State.STOPPED}),
    State.COMPLETED: frozenset({State.PENDING}),  # only by an explicit resume
    State.FAILED: frozenset({State.PENDING}),
    State.STOPPED: frozenset({State.PENDING}),
}


class InvalidTransition(EccError):
    """A state change the table does not allow (for example completed -> running)."""


def parse_state(value: str) -> State:
    try:
        return State(value.strip().lower())
    except ValueError:
        known = ", ".join(s.value for s in State)
        raise EccError(f"unknown session state {value!r} (known: {known})") from None


def state_selection(names: Iterable[str]) -> tuple[list[State], bool]:
    """What a filter by state names reads from the store: (the real states, and whether only
    their ``waiting`` sessions are wanted). ``waiting`` is a display state: running and stale
    sessions with a held tool call; asked for beside real states, it adds nothing they have."""
    wanted = {name.strip().lower() for name in names}
    states = [parse_state(name) for name in sorted(wanted - {WAITING})]
    if WAITING in wanted:
        states += [s for s in (State.RUNNING, State.STALE) if s not in states]
    return states, WAITING in wanted


def select_waiting(rows: Iterable[Session], names: Iterable[str]) -> list[Session]:
    """``rows`` read for :func:`state_selection` ``names`` that has ``waiting``: the sessions
    whose display state or real state was asked for."""
    wanted = {name.strip().lower() for name in names}
    return [s for s in rows if s.display_state in wanted or s.state.value in wanted]


def listed_sessions(
    store: Any, names: Iterable[str] = (), show_all: bool = False, limit: int | None = None
) -> list[Session]:
    """What a session listing shows on every front (``ecc sessions``, the remote API), newest
    first: the states ``names`` asks for (:func:`state_selection`); else every session with
    ``show_all``; else the active ones and those paused for a conflict (stopped with an open
    incident), which still want a person."""
    names = list(names)
    if names:
        states, waiting_only = state_selection(names)
        rows = store.list_sessions(states, limit=limit)
        return select_waiting(rows, names) if waiting_only else rows
    if show_all:
        return store.list_sessions(None, limit=limit)
    rows = store.list_sessions(sorted(ACTIVE), limit=limit)
    shown = {s.id for s in rows}
    rows += [
        s
        for s in store.list_sessions([State.STOPPED], limit=limit)
        if s.open_conflict and s.id not in shown
    ]
    rows.sort(key=lambda s: (s.created_at, s.id), reverse=True)
    return rows[:limit] if limit is not None else rows


def check_transition(src: State | str, dst: State | str) -> None:
    """Raise :class:`InvalidTransition` unless ``src -> dst`` is in :data:`TRANSITIONS`."""
    src, dst = State(src), State(dst)
    if dst not in TRANSITIONS[src]:
        raise InvalidTransition(f"invalid session transition {src.value} -> {dst.value}")


def now_iso() -> str:
    """UTC now as ISO-8601 with milliseconds and ``Z`` (the project's one time format): what
    :func:`iso` makes of ``datetime.now(UTC)`` (the same clock, floored to the microsecond then
    the millisecond), from ``time``: ``ecc hook`` records its call without importing datetime."""
    ns = time.time_ns()
    second = time.strftime("%Y-%m-%dT%H:%M:%S.", time.gmtime(ns // 1_000_000_000))
    return second + f"{ns // 1_000_000 % 1000:03d}Z"


def iso(moment: datetime) -> str:
    from datetime import UTC

    return (
        moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
    )


def iso_from_epoch(seconds: float) -> str:
    from datetime import UTC, datetime

    return iso(datetime.fromtimestamp(seconds, UTC))


def parse_iso(text: str | None) -> datetime | None:
    if not text:
        return None
    from datetime import datetime

    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def age_seconds(text: str | None, now: datetime | None = None) -> float | None:
    moment = parse_iso(text)
    if moment is None:
        return None
    from datetime import UTC, datetime

    return ((now or datetime.now(UTC)) - moment).total_seconds()


def age_label(text: str | None) -> str:
    """How long ago ISO time ``text`` was, for people: ``42s ago``, ``5m ago``, ``1.5h ago``."""
    seconds = age_seconds(text)
    if seconds is None:
        return "-"
    if seconds < 120:
        return f"{seconds:.0f}s ago"
    if seconds < 7200:
        return f"{seconds / 60:.0f}m ago"
    return f"{seconds / 3600:.1f}h ago"


@plain()
class Session:
    """One row of ``sessions`` as plain data (what ``ecc status --json`` prints)."""

    id: str
    task: str
    harness: str
    state: State
    reason: str = ""
    name: str = ""
    profile_name: str | None = None
    profile: dict[str, Any] | None = None
    executor: str = "local"
    project_dir: str = ""
    repo_root: str | None = None
    repo_url: str | None = None  # the remote a pool worker checks the base commit out of
    working_dir: str = ""
    use_worktree: bool = False
    worktree_path: str | None = None
    worktree_branch: str | None = None
    base_branch: str | None = None
    base_commit: str | None = None
    pr_url: str | None = None  # the pull request ``ecc pr`` opened for the session's branch
    parent_id: str | None = None  # the session that started this one (ecc-sessions-mcp)
    # True: the harness ran under ecc's own hook with risk.enforce on; False: it did not
    # (unenforceable harness, or enforcement off); None: not started yet (or before issue 17).
    enforced: bool | None = None
    slot: bool = False
    runner_pid: int | None = None
    runner_host: str | None = None
    runner_token: str | None = None  # process start time: guards against pid reuse
    harness_pid: int | None = None
    harness_pgid: int | None = None
    harness_token: str | None = None
    exit_code: int | None = None
    exit_signal: int | None = None
    stop_requested: bool = False
    stop_grace: float | None = None
    attempts: int = 0
    run_kind: str = "start"
    harness_session_id: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    created_at: str = ""
    updated_at: str = ""
    started_at: str | None = None
    ended_at: str | None = None
    heartbeat_at: str | None = None
    # Not a column: the oldest undecided approval of the session, read with it (records.py).
    pending_approval: str | None = None
    # Not a column: the oldest open conflict incident the session is part of (conflicts.py).
    open_conflict: int | None = None
    extra: dict[str, Any] = factory(dict)

    @property
    def active(self) -> bool:
        return self.state in ACTIVE

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL

    @property
    def display_state(self) -> str:
        """What every view shows: ``waiting`` (needs a person's decision) for a running
        session with a held tool call, else the state. The runner keeps owning ``state``."""
        if self.pending_approval and self.state in (State.RUNNING, State.STALE):
            return WAITING
        return self.state.value

    @property
    def enforced_text(self) -> str:
        """``enforced`` for people: what every view shows."""
        if self.enforced is None:
            return "-"
        return "yes (ecc's hook, risk.enforce)" if self.enforced else "no"

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Session:
        data = dict(row)
        data["state"] = State(data["state"])
        for flag in ("use_worktree", "slot", "stop_requested"):
            data[flag] = bool(data.get(flag))
        if data.get("enforced") is not None:
            data["enforced"] = bool(data["enforced"])
        profile_json = data.pop("profile_json", None)
        data["profile"] = json.loads(profile_json) if profile_json else None
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        out["state"] = self.state.value
        out["display_state"] = self.display_state
        return out
