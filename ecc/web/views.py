"""What the pages show, read from the store: sessions with their pending approvals, one session
with its output, conversation and tool calls, the approvals inbox."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

LISTED = 500  # sessions on the sessions page, newest first
OUTPUT_SHOWN = 200  # lines of output a session page starts with (the page keeps 2000)
MESSAGES_SHOWN = 50
TOOL_CALLS_SHOWN = 100


@dataclass(frozen=True)
class Filters:
    """The sessions page's filters (empty: any)."""

    state: str = ""
    harness: str = ""
    repository: str = ""

    def keep(self, session: Session) -> bool:
        return (
            (not self.state or self.state in (session.display_state, session.state.value))
            and (not self.harness or session.harness == self.harness)
            and (not self.repository or session.project_dir == self.repository)
        )

    def query(self) -> str:
        from urllib.parse import urlencode

        pairs = {"state": self.state, "harness": self.harness, "repo": self.repository}
        return urlencode({k: v for k, v in pairs.items() if v})


def sessions(store: Store, config: Config, filters: Filters) -> dict[str, Any]:
    """The sessions page: the rows that pass ``filters`` and the choices each filter offers."""
    from ecc.observability import approvals
    from ecc.sessions.liveness import refresh_liveness

    refresh_liveness(store, None, config)  # a dead runner's session shows failed, not running
    every = store.list_sessions(None, limit=LISTED)
    held = Counter(a["session_id"] for a in approvals.pending(store))
    from ecc.sessions.delegation import tree_order

    kept = [s for s in every if filters.keep(s)]
    ordered = tree_order(kept)
    rows = grouped(
        [{**row(s, held.get(s.id, 0)), "depth": level} for s, level in ordered],
        [s for s, _ in ordered],
        store.group_ids_of,
    )
    return {
        "rows": rows,
        "filters": filters,
        "choices": {
            "state": sorted({s.display_state for s in every} | {filters.state} - {""}),
            "harness": sorted({s.harness for s in every} | {filters.harness} - {""}),
            "repository": sorted({s.project_dir for s in every} | {filters.repository} - {""}),
        },
        "waiting": sum(1 for r in rows if r["state"] == "waiting"),
        "total": len(every),
    }


def row(session: Session, pending: int) -> dict[str, Any]:
    return {
        "id": session.id,
        "name": session.name,
        "state": session.display_state,
        "harness": session.harness,
        "repository": session.project_dir,
        "task": session.task,
        "created_at": session.created_at,
        "tokens": session.input_tokens + session.output_tokens,
        "cost": session.cost_usd,
        "pending": pending,
        "active": session.active,
        "conflict": session.open_conflict,
        "group": None,  # a group's row (views.grouped) names its group here
        "parent_id": session.parent_id,
        "depth": 0,  # below a listed parent: set by the sessions page's tree order
    }


def grouped(rows: list[dict[str, Any]], listed: list[Session], group_ids_of: Any) -> list[Any]:
    """``rows`` with the sessions of a group (``ecc run --count``, ``--template``) folded into
    one row for the group, where its newest member was; it links to the group's page."""
    from ecc.sessions.groups import sessions_state

    group_of = group_ids_of([s.id for s in listed])
    members: dict[str, list[tuple[dict[str, Any], Session]]] = {}
    for shown, session in zip(rows, listed, strict=True):
        if session.id in group_of:
            members.setdefault(group_of[session.id], []).append((shown, session))
    out: list[dict[str, Any]] = []
    for shown, session in zip(rows, listed, strict=True):
        gid = group_of.get(session.id)
        if gid is None:
            out.append(shown)
            continue
        if gid not in members:
            continue  # its group's row is placed already
        own = members.pop(gid)
        first = min(own, key=lambda pair: pair[1].created_at)[0]
        states = [pair[1] for pair in own]
        out.append(
            {
                **first,
                "id": gid,
                "group": gid,
                "members": len(own),
                "name": f"group of {len(own)}",
                "state": sessions_state(states),
                "harness": ",".join(dict.fromkeys(pair[0]["harness"] for pair in own)),
                "tokens": sum(pair[0]["tokens"] for pair in own),
                "cost": sum(pair[0]["cost"] for pair in own),
                "pending": sum(pair[0]["pending"] for pair in own),
                "active": any(pair[0]["active"] for pair in own),
            }
        )
    return out


def session_panel(store: Store, session: Session) -> dict[str, Any]:
    """The parts of a session page that change while it runs (polled by the page)."""
    from ecc.observability import approvals
    from ecc.observability.toolcalls import listing

    messages = store.list_messages(session.id)[-MESSAGES_SHOWN:]
    return {
        "session": session,
        "row": row(session, 0),
        "approvals": approvals.pending(store, session.id),
        "messages": messages,
        "tool_calls": listing(store, session.id, TOOL_CALLS_SHOWN),
        "can_send": bool(session.harness_session_id),
        "conflicts": store.list_conflicts(open_only=True, session_id=session.id),
    }


def output_tail(store: Store, session: Session) -> tuple[list[dict[str, Any]], int]:
    """The last lines of a session's output and the seq of the last one (0: none yet)."""
    start = store.nth_last_seq(session.id, OUTPUT_SHOWN, None)
    after = start - 1 if start is not None else 0
    lines = store.read_output(session.id, after_seq=after, stream=None, limit=OUTPUT_SHOWN)
    return lines, (lines[-1]["seq"] if lines else after)


def inbox(store: Store) -> dict[str, Any]:
    """Every held call across sessions, oldest first, with its session's task."""
    from ecc.observability import approvals

    held = approvals.pending(store)
    tasks: dict[str, str] = {}
    for approval in held:
        sid = approval.get("session_id")
        if sid and sid not in tasks:
            found = store.get_session(sid)
            tasks[sid] = found.task if found else ""
    return {"approvals": held, "tasks": tasks}
