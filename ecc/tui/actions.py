"""What the dashboard's keys do, apart from the screen: the operations its worker threads run and
the questions it asks before the destructive ones.

Each operation calls the same functions the CLI uses (:mod:`ecc.sessions.service`,
:mod:`ecc.sessions.manager`, :mod:`ecc.sessions.worktrees`, :func:`ecc.sessions.daemon.prune`,
the vault service) with a store connection of its own thread, and returns the message to show;
a refusal raises :class:`~ecc.contract.errors.EccError`. Nothing here touches a widget.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ecc.runtime.terminal import sanitize
from ecc.tui import data, panes

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session


# -- sessions ------------------------------------------------------------------------------------


def start_session(store: Store, config: Config, values: dict[str, Any]) -> Session:
    """Create and start the session the new-session form describes, as ``ecc run -d`` does
    (with the dashboard's config: the executor does not load its own)."""
    from ecc.sessions import manager, service

    request = manager.Request(
        task=values["task"],
        harness=values["harness"],
        profile=values["profile"],
        use_worktree=values["use_worktree"],
        cwd=values["cwd"],
    )
    return service.start(store, request, config)


def stop_session(store: Store, config: Config, session_id: str) -> str:
    from ecc.sessions import manager

    final = manager.stop(store, manager.find(store, session_id), config)
    return f"Session {final.id} {final.state.value}: {final.reason}"


def stop_question(session: Session) -> Text:
    body = Text("Stop ")
    body.append(session.id, "bold")
    body.append(f" ({data.one_line(session.task, 50)})?\n")
    body.append("SIGTERM to its process group, SIGKILL after the grace period. ")
    body.append("Its worktree and branch are kept.")
    return body


def resume_session(store: Store, config: Config, session_id: str) -> str:
    from ecc.sessions import manager

    resumed = manager.resume(store, manager.find(store, session_id), config)
    return f"Session {resumed.id} resumed"


def send_message(store: Store, config: Config, session_id: str, text: str) -> str:
    """Give the session's agent ``text`` as its next instruction, as ``ecc send`` does."""
    from ecc.sessions import manager

    session, message = manager.send(store, manager.find(store, session_id), text, config)
    return manager.sent_outcome(session.id, session.state.value, message["status"])


def remove_session(store: Store, config: Config, session_id: str) -> str:
    from ecc.sessions import manager

    result = manager.remove(store, manager.find(store, session_id), config)
    kept = (result.get("worktree") or {}).get("kept_reason")
    return f"Session {result['id']} removed" + (f" (kept: {kept})" if kept else "")


def remove_question(session: Session) -> Text:
    body = Text("Forget ")
    body.append(session.id, "bold")
    body.append(" and its output? A clean worktree is removed; its branch only if merged.")
    return body


# -- approvals -----------------------------------------------------------------------------------


def decide_approval(store: Store, approval_id: str, decision: str, reason: str | None) -> str:
    """Allow or deny a held tool call as ``ecc approve``/``ecc deny`` do, recorded as decided
    by ``dashboard:<OS user>``."""
    from ecc.observability import approvals

    by = f"dashboard:{approvals.person()}"
    decided = approvals.decide(store, approval_id, decision, by, reason)
    verb = "Approved" if decision == "allow" else "Denied"
    return f"{verb} {decided['tool']} call {decided['id']} of session {decided['session_id']}"


def approval_question(approval: dict[str, Any]) -> Text:
    """What the held call is, before a person lets it run."""
    body = Text("Let ")
    body.append(sanitize(approval["tool"]), "bold")
    body.append(f" run in session {approval['session_id']}?\n")
    body.append(data.one_line(approval["input_excerpt"], 300) + "\n", "bold")
    score = approval["score"]
    risk = f"risk {score:.2f}, " if score is not None else ""
    body.append(f"({risk}{sanitize(approval['action'])}) ")
    body.append(sanitize("; ".join(r for r in approval["reasons"] if r)))
    body.append(f"\nWithout an answer by {approval['expires_at']}: {approval['on_timeout']}.")
    return body


# -- conflicts -----------------------------------------------------------------------------------


def resolve_conflict(store: Store, config: Config, conflict_id: int) -> str:
    """Close the incident and let its paused session run again, as ``ecc conflicts resolve``
    does (unless another open incident still holds it)."""
    from ecc.sessions import conflicts

    return conflicts.closed_summary(conflicts.close(store, conflict_id, config, resume=True))


def conflict_question(incident: dict[str, Any]) -> Text:
    """The incident, before a person closes it and lets the paused session run on."""
    from ecc.sessions import conflicts

    body = Text(f"Conflict {incident['id']}: ")
    body.append(sanitize(conflicts.describe(incident)) + "\n", "bold")
    paused = incident["paused_session"]
    if paused:
        body.append(f"Resolve it and run {paused} again, beside the other session's change?")
    else:
        body.append("Resolve it (no session was paused for it)?")
    return body


# -- worktrees -----------------------------------------------------------------------------------


def prune_worktrees(store: Store, config: Config) -> str:
    from ecc.sessions.daemon import prune

    results = prune(store, config, force_all=True)
    removed = sum(1 for r in results if r["worktree_removed"])
    kept = [f"{r['id']}: {r['kept_reason']}" for r in results if r["kept_reason"]]
    return f"Pruned {removed} worktree(s)" + (f"; kept {'; '.join(kept)}" if kept else "")


def prune_question(count: int) -> Text:
    return Text(
        f"Remove the worktrees of {count} finished session(s)?\n"
        "Worktrees with uncommitted changes are kept; branches are deleted only when merged."
    )


def session_diff(session: Session) -> Text:
    """The worktree's changes against its base, ready to show."""
    from ecc.sessions import worktrees

    text = worktrees.diff(
        Path(session.repo_root or session.project_dir),
        Path(session.worktree_path or ""),
        session.worktree_branch or "",
        session.base_branch,
        session.base_commit,
    )
    return panes.diff_text(text) if text else Text("No changes yet.", "dim")


def merge_check(session: Session) -> tuple[Any, Any]:
    """The worktree's status and, while its branch exists, whether it merges cleanly."""
    from ecc.sessions import worktrees

    repo = Path(session.repo_root or session.project_dir)
    info = worktrees.status(
        repo,
        Path(session.worktree_path or ""),
        session.worktree_branch or "",
        session.base_branch,
        session.base_commit,
    )
    merge = (
        worktrees.mergeability(repo, session.worktree_branch or "", info.base)
        if info.branch_exists
        else None
    )
    return info, merge


def merge_question(session: Session, info: Any, merge: Any) -> tuple[Text, bool]:
    """What the merge would do, and whether it may go ahead (clean, nothing uncommitted)."""
    body = Text()
    body.append(f"{info.branch} → {session.base_branch or info.base}\n", "bold")
    body.append(f"{info.ahead} commit(s) ahead, {info.behind} behind")
    body.append(" (already merged)\n" if info.merged else "\n")
    body.append(f"{len(info.dirty)} uncommitted file(s) in the worktree\n")
    allowed = merge is not None and merge.clean and not info.dirty
    if merge is None:
        body.append("The branch no longer exists.", "red")
    elif merge.clean:
        body.append("Mergeable: clean", "bold green")
    else:
        body.append("Conflicts in: " + sanitize(", ".join(merge.conflicts)), "bold red")
    return body, allowed


def merge_worktree(store: Store, session: Session) -> str:
    from ecc.sessions import worktrees

    result = worktrees.merge(
        Path(session.repo_root or session.project_dir),
        Path(session.worktree_path or ""),
        session.worktree_branch or "",
        session.base_branch,
    )
    store.add_event(session.id, "worktree", f"merged {result['branch']} into {result['base']}")
    if result["already_up_to_date"]:
        return f"{result['base']} already contains {result['branch']}"
    return f"Merged {result['branch']} into {result['base']} ({result['after'][:12]})"


# -- memory --------------------------------------------------------------------------------------


def memory_search(query: str, root: Path) -> Text:
    """Search the vault of ``root`` through the vault service (the ``ecc memory`` code path)."""
    from ecc.vault.service import open_service

    result = open_service(cwd=root).search(query)
    return Text(f"Memory of {sanitize(root)}:\n", "dim") + panes.memory_text(result)
