"""What a parent learns of a child session: its summary, its final answer, and the
``child_result`` message put in the parent's inbox when it ends.

Apart from :mod:`ecc.sessions.delegation` (which starts children, through the session manager)
so that whoever records a child's end (its runner, a read that finds the runner dead, the
daemon, ``ecc stop``) can tell the parent without importing the manager.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.store.models import TERMINAL, Session

if TYPE_CHECKING:
    from ecc.store.base import Store

log = logging.getLogger("ecc.sessions")

MAX_ANSWER_CHARS = 8000  # a child's final answer as the parent reads it (result, inbox)
MAX_FILES_LISTED = 50


def final_answer(store: Store, session: Session) -> str | None:
    """The agent's last answer of the session's latest run (bounded), or None."""
    answers = [
        m for m in store.list_messages(session.id) if m["role"] == "agent" and m["run"] is not None
    ]
    if not answers:
        return None
    latest = max(int(m["run"]) for m in answers)
    text = [str(m["text"]) for m in answers if int(m["run"]) == latest][-1]
    return bounded(text, MAX_ANSWER_CHARS)


def bounded(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def files_changed(session: Session) -> list[str]:
    """Paths the session changed in its worktree (committed on its branch or not); [] when it
    has none or git cannot say."""
    if not session.worktree_path or not Path(session.worktree_path).is_dir():
        return []
    from ecc.sessions.worktrees import git

    path = Path(session.worktree_path)
    names: set[str] = set()
    try:
        if session.base_commit:
            committed = git(path, "diff", "--name-only", f"{session.base_commit}..HEAD")
            names.update(line for line in committed.stdout.splitlines() if line.strip())
        status = git(path, "status", "--porcelain", "--untracked-files=all").stdout
        names.update(line[3:] for line in status.splitlines() if len(line) > 3)
    except EccError:
        return []
    return sorted(names)


def summary(store: Store, session: Session) -> dict[str, Any]:
    """What a parent reads about a child: its state, exit, files changed, tokens and cost."""
    changed = files_changed(session)
    return {
        "id": session.id,
        "harness": session.harness,
        "state": session.display_state,
        "reason": session.reason,
        "exit_code": session.exit_code,
        "files_changed": changed[:MAX_FILES_LISTED],
        "files_changed_count": len(changed),
        "tokens": int(session.input_tokens or 0) + int(session.output_tokens or 0),
        "cost_usd": float(session.cost_usd or 0.0),
        "worktree_branch": session.worktree_branch,
    }


def result(store: Store, session: Session) -> dict[str, Any]:
    """A child's summary and its final answer (None while it has none)."""
    return {**summary(store, session), "final_answer": final_answer(store, session)}


def notify_parent(store: Store, session_id: str) -> dict[str, Any] | None:
    """Put an ended child's final answer and summary in its parent's inbox (kind
    ``child_result``); None for a session without a parent."""
    session = store.get_session(session_id)
    if session is None or not session.parent_id or session.state not in TERMINAL:
        return None
    if store.get_session(session.parent_id) is None:
        return None
    data = summary(store, session)
    answer = final_answer(store, session)
    head = f"Child session {session.id} ({session.harness}) {session.state.value}"
    text = f"{head}: {answer}" if answer else f"{head} without a final answer ({session.reason})"
    return store.post_mail(
        session.parent_id, text, sender_id=session.id, kind="child_result", data=data
    )


def tell_parent(store: Store, session_id: str) -> None:
    """:func:`notify_parent` for those recording an end, which a failure here must not hurt."""
    try:
        notify_parent(store, session_id)
    except Exception as exc:
        log.warning("could not tell the parent of session %s: %s", session_id, exc)
