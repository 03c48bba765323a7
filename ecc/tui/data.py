"""What the dashboard shows, read from the store incrementally, and how each cell looks.

No Textual here: the watchers and formatters are plain Python (plus Rich ``Text``), so they are
cheap to test and reuse.

Reading only what changed:

* :meth:`SessionWatcher.poll` first asks :meth:`Store.change_counter` (SQLite ``data_version``):
  when no other connection has committed since the last poll, nothing else is read;
* otherwise it reads the sessions whose ``updated_at`` is at or after a watermark (the newest
  ``updated_at`` seen, minus :data:`WATERMARK_MARGIN_SECS` so that a writer which stamped its row
  before waiting for the write lock is not missed), compares them with its cache, and reloads
  everything only when the session count says rows were deleted;
* risk flags are re-aggregated only when the newest tool call id changes;
* :class:`OutputFollower` reads the selected session's lines after the last ``seq`` it has, and
  when more than its capacity arrived since, jumps to the tail (the pane is bounded).

Every piece of agent text goes through :func:`ecc.runtime.terminal.sanitize` and into Rich ``Text``
objects (never markup strings), so escape sequences and ``[markup]`` in agent output are inert.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ecc.runtime.money import format_cost
from ecc.runtime.terminal import sanitize
from ecc.sessions.liveness import refresh_liveness
from ecc.store.models import WAITING, State, iso, parse_iso

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

WATERMARK_MARGIN_SECS = 15.0  # > the store's busy timeout: a row stamped before a lock wait
OUTPUT_CAPACITY = 2000  # lines kept in the output pane
TOOL_CALLS_SHOWN = 200

STATE_STYLES: dict[str, str] = {
    State.QUEUED: "magenta",
    State.PENDING: "cyan",
    State.RUNNING: "bold green",
    WAITING: "bold black on yellow",  # a tool call waits for a person: approve (a) or deny (x)
    State.STALE: "bold yellow",
    State.COMPLETED: "blue",
    State.FAILED: "bold red",
    State.STOPPED: "dim",
}

# The status bar's order of states: waiting beside running, which it is a part of.
DISPLAY_ORDER: tuple[str, ...] = (
    State.QUEUED,
    State.PENDING,
    State.RUNNING,
    WAITING,
    State.STALE,
    State.COMPLETED,
    State.FAILED,
    State.STOPPED,
)

COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "ID"),
    ("state", "State"),
    ("harness", "Harness"),
    ("task", "Task"),
    ("age", "Age"),
    ("worktree", "Worktree"),
    ("tokens", "Tokens"),
    ("cost", "Cost"),
    ("risk", "Risk"),
)

TASK_WIDTH = 48  # the default; the dashboard gives the task what the terminal width leaves
OTHER_COLUMNS_WIDTH = 98  # every other column with its padding (risk: "0.92 · 3 calls ✖1")


def task_width(terminal_width: int) -> int:
    return max(16, min(72, terminal_width - OTHER_COLUMNS_WIDTH))


# by ecc.observability.budgets level: unconfigured, normal, advisory, warning, critical, over budget
LEVEL_STYLES = ("", "", "yellow", "dark_orange", "bold red", "bold white on red")


def one_line(text: object, width: int | None = None) -> str:
    """Sanitised first line of ``text``, cut to ``width`` characters with an ellipsis."""
    clean = sanitize(text)
    first = clean.splitlines()[0] if clean else ""
    if width is not None and len(first) > width:
        return first[: width - 1] + "…"
    return first


def fmt_age(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = max(seconds, 0.0)
    if seconds < 120:
        return f"{seconds:.0f}s"
    if seconds < 7200:
        return f"{seconds // 60:.0f}m"
    if seconds < 172800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.0f}d"


def age_text(session: Session, now: datetime) -> str:
    """The age cell's text: what the dashboard recomputes for every row on screen each second."""
    created = parse_iso(session.created_at) if session.created_at else None
    return fmt_age((now - created).total_seconds() if created is not None else None)


def fmt_tokens(count: int) -> str:
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k"
    return f"{count / 1_000_000:.1f}M"


def risk_style(score: float | None, risk: Any) -> str:
    """The colour of a risk score under the ``[risk]`` thresholds."""
    if score is None:
        return "dim"
    if score >= risk.block:
        return "bold red"
    if score >= risk.require_confirmation:
        return "dark_orange"
    if score >= risk.review:
        return "yellow"
    return "green"


def risk_flags(summary: dict[str, Any] | None, risk: Any) -> Text:
    """A session's risk cell: highest score and number of calls (hooked or seen in the
    output, each once), then denied (✖) and asked (?) counts."""
    if not summary:
        return Text("-", style="dim")
    out = Text()
    score = summary.get("max_score")
    calls = int(summary.get("calls") or 0)
    counted = f"{calls} call" + ("" if calls == 1 else "s")
    if score is not None:
        out.append(f"{score:.2f}", style=risk_style(score, risk))
        out.append(f" · {counted}", style="dim")
    else:  # only calls recorded unscored
        out.append(counted, style="dim")
    if summary.get("denied"):
        out.append(f" ✖{summary['denied']}", style="bold red")
    if summary.get("asked"):
        out.append(f" ?{summary['asked']}", style="yellow")
    return out


def worktree_text(session: Session) -> str:
    if session.worktree_branch:
        return session.worktree_branch
    if session.use_worktree:
        return "(pending)"
    return "-"


def row_cells(
    session: Session,
    risk_summary: dict[str, Any] | None,
    config: Config,
    now: datetime,
    width: int = TASK_WIDTH,
    depth: int = 0,
) -> dict[str, Text]:
    """The sessions-table cells of one session, keyed by column; tokens and cost are coloured
    by the session's budget state (:func:`ecc.observability.budgets.for_session`); a child
    session's task is indented under its parent (``depth``)."""
    from ecc.observability import budgets

    token_limit, cost_limit = budgets.session_limits(session, config)
    thresholds = config.budget_alert_thresholds
    tokens = session.input_tokens + session.output_tokens
    token_level = budgets.meter(tokens, token_limit, thresholds).level
    cost_level = budgets.meter(session.cost_usd, cost_limit, thresholds).level
    label = session.name and f"{session.name}: "
    if depth:
        label = "  " * (depth - 1) + "└─ " + label
    return {
        "id": Text(session.id),
        "state": Text(
            session.display_state + ("!" if session.open_conflict else ""),  # ecc conflicts
            style=STATE_STYLES.get(session.display_state, ""),
        ),
        "harness": Text(one_line(session.harness)),
        "task": Text(one_line(f"{label}{session.task}", width)),
        "age": Text(age_text(session, now)),
        "worktree": Text(one_line(worktree_text(session))),
        "tokens": Text(fmt_tokens(tokens), style=LEVEL_STYLES[token_level], justify="right"),
        "cost": Text(
            format_cost(session.cost_usd), style=LEVEL_STYLES[cost_level], justify="right"
        ),
        "risk": risk_flags(risk_summary, config.risk),
    }


def matches(session: Session, query: str) -> bool:
    """True when every space-separated term of ``query`` occurs in the session's id, state,
    harness, name, task, profile or branch (case-insensitive). ``state:X`` matches a state
    (``state:waiting`` the sessions whose tool call waits for a decision)."""
    haystack = " ".join(
        str(part or "")
        for part in (
            session.id,
            session.display_state,
            session.harness,
            session.name,
            session.task,
            session.profile_name,
            session.worktree_branch,
        )
    ).lower()
    for term in query.lower().split():
        if term.startswith("state:"):
            if term[len("state:") :] not in (session.state.value, session.display_state):
                return False
        elif term not in haystack:
            return False
    return True


def sort_key(session: Session) -> tuple[str, str]:
    return (session.created_at, session.id)


# -- incremental reads ---------------------------------------------------------------------


@dataclass
class Changes:
    """What one poll found: changed (or new) session ids, removed ids, and flags."""

    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    risk_changed: set[str] = field(default_factory=set)
    reloaded: bool = False
    store_changed: bool = False  # another connection committed since the last poll

    def __bool__(self) -> bool:
        return bool(self.changed or self.removed or self.risk_changed or self.reloaded)


class SessionWatcher:
    """Keeps every session and its risk summary in memory, refreshed from what changed."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.sessions: dict[str, Session] = {}
        self.risk: dict[str, dict[str, Any]] = {}
        self.depths: dict[str, int] = {}  # a child session's depth below its listed parent
        self.version: int | None = None
        self.watermark: str | None = None
        self.last_tool_id: int | None = None
        self.polls = 0
        self.reads = 0  # polls that read session rows (the store had changed)
        self._runners: list[Session] | None = None  # the sessions with a runner, when known

    def poll(self, force: bool = False) -> Changes:
        self.polls += 1
        if self._runners is None:  # only these can have a dead runner to record
            self._runners = [s for s in self.sessions.values() if s.runner_pid]
        if refresh_liveness(self.store, self._runners):
            force = True  # a dead runner recorded through our own connection moves no counter
        version = self.store.change_counter()
        if version == self.version and not force:
            return Changes()
        self.version = version
        self.reads += 1
        changes = Changes(store_changed=True)
        if self.watermark is None or force:
            self._reload(changes)
        else:
            for session in self.store.sessions_updated_since(self.watermark):
                if self.sessions.get(session.id) != session:
                    self.sessions[session.id] = session
                    changes.changed.add(session.id)
                    self._runners = None
                self._advance(session.updated_at)
            count = int(self.store.usage_totals()["sessions"])
            if count != len(self.sessions):
                self._reload(changes)
        self._poll_risk(changes)
        return changes

    def _reload(self, changes: Changes) -> None:
        fresh = {s.id: s for s in self.store.list_sessions()}
        changes.removed |= set(self.sessions) - set(fresh)
        changes.changed |= {sid for sid, s in fresh.items() if self.sessions.get(sid) != s}
        changes.reloaded = True
        self.sessions = fresh
        self._runners = None
        self.watermark = None
        for session in fresh.values():
            self._advance(session.updated_at)
        if self.watermark is None:
            self.watermark = iso(datetime.now(UTC) - timedelta(seconds=WATERMARK_MARGIN_SECS))

    def _advance(self, updated_at: str) -> None:
        moment = parse_iso(updated_at)
        if moment is None:
            return
        mark = iso(moment - timedelta(seconds=WATERMARK_MARGIN_SECS))
        if self.watermark is None or mark > self.watermark:
            self.watermark = mark

    def _poll_risk(self, changes: Changes) -> None:
        latest = self.store.list_tool_calls(None, limit=1)
        last_id = int(latest[0]["id"]) if latest else 0
        if last_id == self.last_tool_id and not changes.reloaded:
            return
        self.last_tool_id = last_id
        summary = self.store.tool_call_summary()
        for sid in set(summary) | set(self.risk):
            if summary.get(sid) != self.risk.get(sid):
                changes.risk_changed.add(sid)
        self.risk = summary

    def ordered(self, query: str = "") -> list[Session]:
        """Sessions newest first, those matching ``query`` only, each followed by the children
        it started (their depths in :attr:`depths`)."""
        from ecc.sessions.delegation import tree_order

        rows = [s for s in self.sessions.values() if not query or matches(s, query)]
        rows.sort(key=sort_key, reverse=True)
        ordered = tree_order(rows)
        self.depths = {session.id: level for session, level in ordered}
        return [session for session, _ in ordered]


class OutputFollower:
    """The selected session's output: new lines since the last read, bounded to ``capacity``."""

    def __init__(self, capacity: int = OUTPUT_CAPACITY) -> None:
        self.capacity = capacity
        self.session_id: str | None = None
        self.last_seq = 0

    def select(self, session_id: str | None) -> None:
        self.session_id = session_id
        self.last_seq = 0

    def poll(self, store: Store) -> tuple[bool, list[dict[str, Any]]]:
        """``(reset, rows)``: when ``reset`` the pane must be cleared before adding ``rows``."""
        if self.session_id is None:
            return False, []
        top = store.max_seq(self.session_id)
        if top < self.last_seq:  # the session was forgotten and its output with it
            self.last_seq = 0
            return True, []
        if top == self.last_seq:
            return False, []
        reset = self.last_seq == 0
        if top - self.last_seq > self.capacity:
            rows = store.tail_output(self.session_id, self.capacity)
            reset = True
        else:
            rows = store.read_output(self.session_id, after_seq=self.last_seq)
        if rows:
            self.last_seq = int(rows[-1]["seq"])
        return reset, rows


def output_line(row: dict[str, Any]) -> str:
    """One captured line as the output pane shows it (plain text, never markup)."""
    line = sanitize(row["line"]).replace("\n", " ")
    return f"! {line}" if row.get("stream") == "stderr" else line


# -- panes --------------------------------------------------------------------------------


def tool_call_cells(call: dict[str, Any], risk: Any) -> tuple[Text, ...]:
    """Time, tool, score, action, decision and input summary of one recorded tool call."""
    from ecc.observability.risk import stored_action

    score = call.get("score")
    action = stored_action(call.get("action"), score)  # an old row's none reads as allow
    decision = call.get("decision") or "-"
    decision_style = {"deny": "bold red", "ask": "yellow", "allow": "green"}.get(decision, "dim")
    stamp = str(call.get("created_at") or "")[11:19]
    summary = call.get("input_json") or ""
    return (
        Text(stamp),
        Text(one_line(call.get("tool"), 20)),
        Text(f"{score:.2f}" if score is not None else "-", style=risk_style(score, risk)),
        Text(one_line(action or "-", 20), style=risk_style(score, risk)),
        Text("DENIED" if decision == "deny" else decision, style=decision_style),
        Text(one_line(summary, 80)),
    )


def status_text(
    sessions: Iterable[Session], config: Config, query: str = "", shown: int | None = None
) -> Text:
    """Counts by state, then token and cost use against the overall budgets (coloured and
    labelled by :mod:`ecc.observability.budgets` levels)."""
    from ecc.observability import budgets

    counts: dict[str, int] = {}
    tokens = 0
    cost = 0.0
    total = 0
    for session in sessions:
        total += 1
        counts[session.display_state] = counts.get(session.display_state, 0) + 1
        tokens += session.input_tokens + session.output_tokens
        cost += session.cost_usd
    out = Text()
    out.append(f"{total} sessions", style="bold")
    for state in DISPLAY_ORDER:
        if counts.get(state):
            out.append("  ")
            out.append(f"{counts[state]} {state}", style=STATE_STYLES[state])
    thresholds = config.budget_alert_thresholds
    meters: tuple[tuple[str, Any, Any, Callable[[Any], str]], ...] = (
        ("tokens", tokens, config.token_budget, fmt_tokens),
        ("cost", cost, config.cost_budget_usd, format_cost),
    )
    for name, used, limit, fmt in meters:
        out.append("  │  " if name == "tokens" else "  ")
        out.append(f"{name} ")
        level = budgets.meter(used, limit, thresholds)
        text = fmt(used)
        if limit > 0:
            text += f" / {fmt(limit)} ({used / limit:.0%}"
            if level.level >= 2:
                text += ", " + budgets.label(level.level, thresholds)
            text += ")"
        out.append(text, style=LEVEL_STYLES[level.level])
    if query:
        out.append("  │  filter: ")
        out.append(sanitize(query), style="bold cyan")
        if shown is not None:
            out.append(f" ({shown} shown)")
    return out


def wall_clock() -> datetime:
    return datetime.now(UTC)


Clock = Callable[[], datetime]
