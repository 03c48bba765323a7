"""Sessions that start sessions: children, their limits and results, and messages between them.

A session's agent delegates through the sessions MCP server (:mod:`ecc.mcp.sessions`), which
calls these functions as the session it was started for, never as another. A child runs the
task with the harness asked for, in the parent's repository (its own worktree when the parent
has one), with ``parent_id`` naming the parent. ``[delegation]`` bounds it: ``max_depth`` levels
below a session a person started, ``max_children`` children of one parent; and the parent's
budget covers its children (:mod:`ecc.observability.budgets` counts a family's usage against
each ancestor's limits). When a child ends, its final answer (bounded) and a summary are put in
the parent's inbox (:mod:`ecc.sessions.child_results`). Messages are untrusted data: bounded
here, escaped by whoever prints them.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions.child_results import result, summary
from ecc.store.models import TERMINAL, Session

if TYPE_CHECKING:
    from ecc.store.base import Store

MAX_TASK_BYTES = 65536  # a child's task reaches its harness as one argv element
MAX_MESSAGE_BYTES = 16384  # one message between sessions
MAX_DEPTH_WALK = 64  # a parent chain longer than this is treated as a loop
POLL_SECS = 0.2


class Refused(EccError):
    """A delegation ecc refuses (a limit, a budget, a session that is not the caller's)."""


def check_text(text: str, what: str, limit: int) -> str:
    """``text`` stripped, or :class:`Refused` when empty, oversized or holding a NUL."""
    if not isinstance(text, str):
        raise Refused(f"the {what} must be text")
    text = text.strip()
    if not text:
        raise Refused(f"the {what} must not be empty")
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise Refused(f"the {what} is {size} bytes; at most {limit} bytes")
    if "\x00" in text:
        raise Refused(f"the {what} must not contain NUL characters")
    return text


def caller(store: Store, session_id: str) -> Session:
    """The session a server was started for; refused when the store does not know it."""
    session = store.get_session(session_id)
    if session is None:
        raise Refused(f"session {session_id} does not exist")
    return session


def ancestors(store: Store, session: Session) -> list[Session]:
    """The session's parent, its parent's parent, ... (nearest first)."""
    found: list[Session] = []
    seen = {session.id}
    current = session
    while current.parent_id:
        if current.parent_id in seen or len(found) >= MAX_DEPTH_WALK:
            raise Refused(f"session {session.id}'s parent links form a loop")
        parent = store.get_session(current.parent_id)
        if parent is None:
            break  # the parent was removed: the chain ends there
        found.append(parent)
        seen.add(parent.id)
        current = parent
    return found


def depth(store: Store, session: Session) -> int:
    """0 for a session a person started, 1 for its child, and so on."""
    return len(ancestors(store, session))


def check_limits(store: Store, parent: Session, config: Any) -> None:
    """Refuse a new child of ``parent`` past ``[delegation]``'s limits or a used-up budget."""
    limits = config.delegation
    if not limits.enabled:
        raise Refused("cannot start a child session: delegation is off ([delegation] enabled)")
    level = depth(store, parent) + 1
    if level > limits.max_depth:
        raise Refused(
            f"cannot start a child session: session {parent.id} is at [delegation] max_depth "
            f"({limits.max_depth})"
        )
    count = len(store.children(parent.id))
    if count >= limits.max_children:
        raise Refused(
            f"cannot start a child session: session {parent.id} has reached [delegation] "
            f"max_children ({limits.max_children})"
        )
    from ecc.observability import budgets

    for payer in (parent, *ancestors(store, parent)):  # each ancestor's budget covers it
        budgets.refuse_start(store, config, payer, what="start a child session")


def start_child(
    store: Store,
    parent_id: str,
    config: Any,
    *,
    task: str,
    harness: str,
    profile: str | None = None,
    name: str = "",
) -> Session:
    """Start ``task`` with ``harness`` as a child of ``parent_id``; returns the child."""
    from ecc.sessions import service
    from ecc.sessions.manager import Request

    task = check_text(task, "task", MAX_TASK_BYTES)
    if not isinstance(harness, str) or not harness.strip():
        raise Refused("a harness is required (claude, codex, gemini, opencode, ...)")
    parent = caller(store, parent_id)
    check_limits(store, parent, config)
    request = Request(
        task=task,
        harness=harness.strip(),
        profile=profile or parent.profile_name,
        use_worktree=True if parent.repo_root else None,
        name=name,
        cwd=Path(parent.repo_root or parent.project_dir),
        executor=parent.executor,
        parent=parent.id,
    )
    child = service.start(store, request, config)
    store.add_event(parent.id, "delegation", f"started child session {child.id} ({child.harness})")
    return child


def own_child(store: Store, parent_id: str, child_id: str) -> Session:
    """The child ``child_id`` of ``parent_id``: refused for any other session."""
    child = store.get_session(child_id) if isinstance(child_id, str) else None
    if child is None or child.parent_id != parent_id:
        raise Refused(f"session {child_id!r} is not a child of session {parent_id}")
    return child


def wait(
    store: Store, parent_id: str, child_id: str, timeout: float, config: Any
) -> dict[str, Any]:
    """The child's :func:`result` once it has ended, or as it stands after ``timeout`` seconds
    (at most ``[delegation] max_wait_secs``); ``done`` says which."""
    child = own_child(store, parent_id, child_id)
    deadline = time.monotonic() + max(0.0, min(float(timeout), config.delegation.max_wait_secs))
    while child.state not in TERMINAL and time.monotonic() < deadline:
        time.sleep(POLL_SECS)
        child = own_child(store, parent_id, child_id)
    return {**result(store, child), "done": child.state in TERMINAL}


def list_children(store: Store, parent_id: str) -> list[dict[str, Any]]:
    return [summary(store, child) for child in store.children(parent_id)]


def send_message(
    store: Store, recipient_id: str, text: str, sender_id: str | None = None
) -> dict[str, Any]:
    """Leave ``text`` in ``recipient_id``'s inbox (from ``sender_id``, or a person)."""
    text = check_text(text, "message", MAX_MESSAGE_BYTES)
    if store.get_session(recipient_id) is None:
        raise Refused(f"session {recipient_id} does not exist")
    return store.post_mail(recipient_id, text, sender_id=sender_id)


def read_inbox(
    store: Store, session_id: str, *, unread_only: bool = True, mark: bool = True, limit: int = 50
) -> list[dict[str, Any]]:
    """The session's messages (unread ones by default), marked read as they are returned."""
    messages = store.inbox(session_id, unread_only=unread_only, limit=limit)
    if mark:
        store.mark_read(session_id, [int(m["id"]) for m in messages if m["read_at"] is None])
    return messages


def tree_order(rows: list[Any]) -> list[tuple[Any, int]]:
    """``rows`` (sessions or their dicts) as a tree: each parent followed by its children (in
    the rows' own order), with each row's depth; a row whose parent is not listed is a root."""

    def field(row: Any, name: str) -> Any:
        return row.get(name) if isinstance(row, dict) else getattr(row, name, None)

    listed = {field(row, "id") for row in rows}
    below: dict[str, list[Any]] = {}
    roots = []
    for row in rows:
        parent = field(row, "parent_id")
        if parent and parent in listed and parent != field(row, "id"):
            below.setdefault(parent, []).append(row)
        else:
            roots.append(row)
    ordered: list[tuple[Any, int]] = []
    seen: set[str] = set()
    stack = [(row, 0) for row in reversed(roots)]
    while stack:
        row, level = stack.pop()
        if field(row, "id") in seen:
            continue
        seen.add(field(row, "id"))
        ordered.append((row, level))
        stack.extend((child, level + 1) for child in reversed(below.get(field(row, "id"), [])))
    ordered += [(row, 0) for row in rows if field(row, "id") not in seen]  # a loop: flat
    return ordered
