"""Conflicts between sessions: two active sessions changing the same file, and the policy.

The daemon calls :func:`check` on every pass (``[conflict_resolution]``, read with the
configuration of each repository, so its project file may tighten it):

1. **resume** — a session paused for a conflict runs again once every session it yielded to
   is done: merged into its base branch, removed, or ended without changes. An agent with a
   conversation continues it, told why it was paused and what became of the other session
   (``ecc send``'s service); any other is resumed (``ecc resume``'s). A paused session
   someone resumed or removed by hand closes its incidents.
2. **detect** — the files each active session changed: in its worktree, the changes against
   its base commit (committed, uncommitted and untracked, by real git); in a checkout shared
   without a worktree, the changed files last modified while it ran; and, for every session,
   the paths its recorded write tool calls (Edit, Write, ...) name, which may come first.
   Paths are repository-relative and normalised, and compared within one repository.
3. **act** — each (path, session pair) found for the first time opens one incident (a
   conditional insert: two daemons never act twice), raises a ``conflict`` event on both
   sessions and, with ``notify_lead``, a ``session_conflict`` notification; then the strategy
   pauses one session through ``ecc stop``'s service, with the reason recorded
   (``conflict_stop``, what the runner writes as the reason it stopped): ``escalate`` and
   ``merge`` pause the later writer, ``last_write_wins`` the earlier one.

A person sees incidents in ``ecc conflicts``, ``ecc status``, ``ecc sessions`` (the ``!``
marker), the dashboard and the web pages, and closes one with ``ecc conflicts resolve`` (the
paused session runs again) or ``ecc conflicts dismiss`` (it stays as it is).
"""

from __future__ import annotations

import logging
import os
import posixpath
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.store.models import ACTIVE, TERMINAL, State, parse_iso

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.conflicts")

# Sessions whose files count: every active one but a queued one (it has not started).
WATCHED = (State.PENDING, State.RUNNING, State.STALE)
# Tool calls that write the file their input names (Claude, Gemini, OpenCode spellings).
WRITE_TOOLS = frozenset({"edit", "write", "multiedit", "notebookedit", "write_file", "replace"})
PATH_KEYS = ("file_path", "notebook_path", "path", "filePath")
MAX_PATHS_SHOWN = 5
MAX_PATH_CHARS = 4096  # a tool call's input is the agent's: a longer "path" names no file
# A run's start is stamped just after its harness is spawned, which may have written already.
START_SLACK_SECS = 2.0


# -- detection -------------------------------------------------------------------------------


def repository_of(session: Session) -> str:
    """The repository a session works on (the top level of the checkout it runs in without a
    worktree; its directory outside git), as one comparable text."""
    if session.repo_root:
        return os.path.realpath(session.repo_root)
    where = session.project_dir or session.working_dir
    top = _top_level(where) if where and Path(where).is_dir() else None
    return os.path.realpath(top or where)


def normalise(path: str, roots: list[str], cwd: str) -> str | None:
    """``path`` (relative ones from the harness's directory ``cwd``) relative to the first of
    the repository ``roots`` holding it, in one spelling; None for a path outside them."""
    text = path.replace("\\", "/").strip()
    if not text or "\0" in text or len(text) > MAX_PATH_CHARS:
        return None
    real = os.path.realpath(os.path.join(cwd, text))
    for root in roots:
        if real == root or real.startswith(root.rstrip("/") + "/"):
            text = os.path.relpath(real, root)
            break
    else:
        return None
    normal = posixpath.normpath(text)
    if normal in (".", "..") or normal.startswith("../"):
        return None
    return normal


def _git_paths(directory: str, *args: str) -> list[str]:
    from ecc.sessions.worktrees import git

    result = git(directory, *args, "-z", check=False)
    if result.returncode != 0:
        return []
    return [p for p in result.stdout.split("\0") if p]


def _top_level(directory: str) -> str | None:
    from ecc.sessions.worktrees import git

    found = git(directory, "rev-parse", "--show-toplevel", check=False)
    return found.stdout.strip() or None if found.returncode == 0 else None


def _mtime(path: str) -> float | None:
    try:
        return os.lstat(path).st_mtime
    except OSError:
        return None


def git_changes(session: Session, now: float) -> dict[str, float]:
    """Repository-relative paths the session changed by git, with when each was written (its
    modification time; a deleted file counts from ``now``)."""
    since: float | None
    directory: str | None
    if session.worktree_path and Path(session.worktree_path).is_dir() and session.base_commit:
        directory, since, base = session.worktree_path, None, session.base_commit
    elif not session.use_worktree and Path(session.working_dir).is_dir():
        # a checkout other sessions may share: only what changed while this one ran is its
        started = parse_iso(session.started_at)
        directory = _top_level(session.working_dir)
        if started is None or directory is None:
            return {}
        since, base = started.timestamp() - START_SLACK_SECS, "HEAD"
    else:
        return {}
    assert directory is not None
    paths = _git_paths(directory, "diff", "--name-only", "--no-renames", base)
    paths += _git_paths(directory, "ls-files", "--others", "--exclude-standard")
    found: dict[str, float] = {}
    for path in paths:
        written = _mtime(os.path.join(directory, path))
        if since is not None and (written is None or written < since):
            continue
        found[posixpath.normpath(path)] = now if written is None else written
    return found


def tool_call_changes(store: Store, session: Session, repo: str) -> dict[str, float]:
    """Paths the session's recorded write tool calls name, with the time of the first one."""
    import json

    roots = [os.path.realpath(where) for where in (session.worktree_path, repo) if where]
    cwd = session.working_dir or repo
    found: dict[str, float] = {}
    for call in store.list_tool_calls(session.id):
        if str(call.get("tool", "")).lower() not in WRITE_TOOLS:
            continue
        try:
            data = json.loads(call.get("input_json") or "{}")
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for key in PATH_KEYS:
            value = data.get(key)
            path = normalise(value, roots, cwd) if isinstance(value, str) else None
            if path is None:
                continue
            moment = parse_iso(call.get("created_at"))
            stamp = moment.timestamp() if moment else 0.0
            found[path] = min(stamp, found.get(path, stamp))
            break
    return found


def changed_files(store: Store, session: Session, repo: str, now: float) -> dict[str, float]:
    """Every path the session changed (git and tool calls) in ``repo``, with its earliest
    write."""
    found = git_changes(session, now)
    for path, stamp in tool_call_changes(store, session, repo).items():
        found[path] = min(stamp, found.get(path, stamp))
    return found


# -- the policy ------------------------------------------------------------------------------


def _config_for(repo: str, fallback: Config) -> Any:
    """The configuration as a session started in ``repo`` sees it (its project file counts,
    as trusted so far); the daemon's own when it cannot be read."""
    from ecc.runtime.config import view as fastconfig

    try:
        return fastconfig.view(Path(repo))
    except Exception as exc:  # a broken project file must not switch the policy off
        log.warning("configuration of %s not read (%s); the daemon's applies", repo, exc)
        return fallback


def check(store: Store, config: Config) -> list[dict[str, Any]]:
    """One pass: resume what may run again, then find and act on new conflicts."""
    import time

    actions = resume_ready(store, config)
    groups: dict[str, list[Session]] = {}
    for session in store.list_sessions(list(WATCHED)):
        if not session.stop_requested:
            groups.setdefault(repository_of(session), []).append(session)
    now = time.time()
    for repo, sessions in groups.items():
        if len(sessions) < 2:
            continue
        policy = _config_for(repo, config).conflict_resolution
        if not policy.enabled:
            continue
        writes = {s.id: changed_files(store, s, repo, now) for s in sessions}
        known = store.known_conflicts(repo)
        ordered = sorted(sessions, key=lambda s: (s.created_at, s.id))
        for one, other in combinations(ordered, 2):
            shared = sorted(set(writes[one.id]) & set(writes[other.id]))
            pair = tuple(sorted((one.id, other.id)))
            fresh = [p for p in shared if (p, *pair) not in known]
            if fresh and not any(_paused_meanwhile(store, s.id) for s in (one, other)):
                actions += _act(store, repo, one, other, fresh, writes, policy)
    return actions


def _paused_meanwhile(store: Store, session_id: str) -> bool:
    """True when an earlier pair of this pass paused the session (or it ended): its other
    pairs wait until it runs again, so a paused session is never chosen to stay."""
    current = store.get_session(session_id)
    return current is None or current.stop_requested or current.state not in WATCHED


def _act(
    store: Store,
    repo: str,
    one: Session,
    other: Session,
    paths: list[str],
    writes: dict[str, dict[str, float]],
    policy: Any,
) -> list[dict[str, Any]]:
    """Open the pair's new incidents and apply the strategy once for them."""
    first = min(writes[one.id][p] for p in paths)
    second = min(writes[other.id][p] for p in paths)
    earlier, later = (one, other) if first <= second else (other, one)
    strategy = policy.strategy
    paused, kept = (earlier, later) if strategy == "last_write_wins" else (later, earlier)
    shown = ", ".join(paths[:MAX_PATHS_SHOWN]) + (
        f" and {len(paths) - MAX_PATHS_SHOWN} more" if len(paths) > MAX_PATHS_SHOWN else ""
    )
    until = "a merge review" if strategy == "merge" else f"{kept.id} is merged or removed"
    reason = f"conflict with session {kept.id} on {shown} ({strategy}): paused until {until}"
    opened = []
    for path in paths:
        row = store.open_conflict(repo, path, (one.id, other.id), strategy, reason)
        if row is not None:  # another daemon recorded it first: it acts, not us
            opened.append(row)
    if not opened:
        return []
    ids = [row["id"] for row in opened]
    data = {
        "conflicts": ids,
        "paths": [row["path"] for row in opened],
        "sessions": sorted((one.id, other.id)),
        "paused": paused.id,
        "kept": kept.id,
        "strategy": strategy,
    }
    for session, partner in ((kept, paused), (paused, kept)):
        store.add_event(
            session.id,
            "conflict",
            f"session {partner.id} changed the same file(s): {shown}; {paused.id} paused",
            data,
        )
    outcome = _pause(store, paused, reason, data)
    for conflict_id in ids:
        if outcome == "paused":
            store.settle_conflict(conflict_id, "paused", paused=paused.id, kept=kept.id)
        else:  # left open for a person: ecc conflicts shows why
            store.settle_conflict(
                conflict_id, "open", paused=paused.id, kept=kept.id, resolution=outcome
            )
    if policy.notify_lead:
        _notify(paused, kept, shown, strategy, outcome, data)
    return [{**data, "action": outcome}]


def _pause(store: Store, session: Session, reason: str, data: dict[str, Any]) -> str:
    """Stop the session as ``ecc stop`` does, the conflict recorded as why; "paused", or why
    it could not be."""
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions import manager

    current = store.get_session(session.id)
    if current is None or current.state in TERMINAL:
        return "not paused: the session had ended"
    store.add_event(session.id, "conflict_stop", f"{reason}: stop requested", data)
    try:
        manager.stop(store, current, fastconfig.view(Path(repository_of(current))))
    except EccError as exc:
        return f"not paused: {exc.message}"
    return "paused"


def _notify(
    paused: Session, kept: Session, shown: str, strategy: str, outcome: str, data: dict[str, Any]
) -> None:
    from ecc.contract.types import Notification
    from ecc.observability.notify import send
    from ecc.runtime.config import view as fastconfig

    send(
        Notification(
            event="session_conflict",
            title=f"ecc: sessions {kept.id} and {paused.id} changed the same file",
            body=f"{shown} | {strategy}: {paused.id} {outcome} (ecc conflicts)",
            session_id=paused.id,
            data=data,
        ),
        fastconfig.view(Path(repository_of(paused))),
    )


# -- resuming and closing --------------------------------------------------------------------


def done_with(store: Store, session_id: str) -> str | None:
    """Why the session no longer holds its files (removed, merged, ended without changes), or
    None while it does."""
    from ecc.sessions import worktrees

    session = store.get_session(session_id)
    if session is None:
        return f"session {session_id} was removed"
    if session.state not in TERMINAL:
        return None
    if not session.worktree_branch:
        return f"session {session_id} ended"  # its changes are in the checkout already
    repo = Path(session.repo_root or session.project_dir)
    path = Path(session.worktree_path or "")
    if session.worktree_path and path.is_dir() and worktrees.dirty_files(path):
        return None
    if not repo.is_dir() or not worktrees.branch_exists(repo, session.worktree_branch):
        return f"session {session_id}'s branch is gone"
    base = session.base_branch or session.base_commit or "HEAD"
    if not worktrees.is_merged(repo, session.worktree_branch, base):
        return None
    tip = worktrees.git(repo, "rev-parse", session.worktree_branch).stdout.strip()
    if tip == session.base_commit:
        return f"session {session_id} ended without changes"
    return f"session {session_id} was merged into {base}"


def resume_ready(store: Store, config: Config) -> list[dict[str, Any]]:
    """Resume each paused session whose every kept partner is done (see :func:`done_with`);
    close the incidents of one resumed or removed by hand."""

    by_paused: dict[str, list[dict[str, Any]]] = {}
    for row in store.list_conflicts(open_only=True):
        if row["status"] == "paused" and row["paused_session"]:
            by_paused.setdefault(row["paused_session"], []).append(row)
    actions: list[dict[str, Any]] = []
    for paused_id, rows in by_paused.items():
        session = store.get_session(paused_id)
        if session is not None and session.state in ACTIVE and session.stop_requested:
            continue  # the pause is still under way
        if session is None or session.state != State.STOPPED:
            why = "was removed" if session is None else "was resumed by hand"
            status = "dismissed" if session is None else "resumed"
            for row in rows:
                store.settle_conflict(row["id"], status, resolution=f"the paused session {why}")
            actions.append({"id": paused_id, "action": f"closed: the paused session {why}"})
            continue
        reasons = [done_with(store, row["kept_session"]) for row in rows]
        if any(reason is None for reason in reasons):
            continue
        because = "; ".join(sorted({r for r in reasons if r}))
        try:
            _run_again(store, session, rows, because, config)
        except EccError as exc:
            actions.append({"id": paused_id, "action": f"not resumed: {exc.message}"})
            continue
        store.add_event(paused_id, "conflict", f"resumed: {because}")
        for row in rows:
            store.settle_conflict(row["id"], "resumed", resolution=because)
        actions.append({"id": paused_id, "action": "resumed", "reason": because})
    return actions


def _run_again(
    store: Store, session: Session, rows: list[dict[str, Any]], because: str, config: Config
) -> None:
    """Resume a paused session. An agent with a conversation is told why it was paused and
    what became of the other session (``ecc send``'s follow-up run); any other runs its task
    again (``ecc resume``)."""
    from ecc.sessions import manager

    settings = _config_for(repository_of(session), config)
    if not session.harness_session_id:
        manager.resume(store, session, settings)
        return
    paths = sorted({row["path"] for row in rows})
    shown = ", ".join(paths[:MAX_PATHS_SHOWN]) + (
        f" and {len(paths) - MAX_PATHS_SHOWN} more" if len(paths) > MAX_PATHS_SHOWN else ""
    )
    kept = ", ".join(sorted({row["kept_session"] for row in rows}))
    message = (
        f"ecc paused you because session {kept} changed the same file(s) as you: {shown}. "
        f"Since then {because}. Bring its changes into your work where they touch yours "
        "(its changes may now be on your base branch), then continue your task."
    )
    manager.send(store, session, message, settings)


def close(store: Store, conflict_id: int, config: Config, *, resume: bool) -> dict[str, Any]:
    """A person closes an incident: ``resolve`` (``resume``: its paused session runs again
    unless another open incident still holds it) or ``dismiss`` (nothing else changes)."""

    row = store.get_conflict(conflict_id)
    if row["status"] not in ("open", "paused"):
        raise EccError(f"conflict {conflict_id} is already {row['status']}")
    status = "resolved" if resume else "dismissed"
    if not store.settle_conflict(conflict_id, status, resolution=f"{status} by a person"):
        raise EccError(f"conflict {conflict_id} was closed meanwhile")
    result: dict[str, Any] = {**store.get_conflict(conflict_id), "resumed": None}
    paused_id = row["paused_session"]
    session = store.get_session(paused_id) if paused_id and resume else None
    if session is None or session.state != State.STOPPED:
        return result
    still = [
        other
        for other in store.list_conflicts(open_only=True, session_id=paused_id)
        if other["status"] == "paused" and other["paused_session"] == paused_id
    ]
    if still:
        result["resumed"] = f"no: conflict {still[0]['id']} still holds it"
        return result
    _run_again(store, session, [row], f"conflict {conflict_id} was resolved by a person", config)
    store.add_event(paused_id, "conflict", f"resumed: conflict {conflict_id} resolved by a person")
    result["resumed"] = paused_id
    return result


def describe(row: dict[str, Any]) -> str:
    """One incident for people: what, between whom, and what became of it."""
    who = f"{row['first_session']} and {row['second_session']}"
    if row["paused_session"]:
        what = f"{row['paused_session']} paused for {row['kept_session']} ({row['strategy']})"
    else:
        what = row["strategy"]
    settled = f" - {row['resolution']}" if row.get("resolution") else ""
    return f"{row['path']}: {who}; {what}; {row['status']}{settled}"


def closed_summary(result: dict[str, Any]) -> str:
    """One line for the person who closed an incident (:func:`close`'s ``result``): how it
    ended and whether its paused session runs again."""
    text = f"Conflict {result['id']} {result['status']}"
    resumed = result.get("resumed")
    if resumed and resumed.startswith("no:"):
        why = resumed.removeprefix("no:").strip()
        return f"{text}; session {result['paused_session']} not resumed ({why})"
    return f"{text}; session {resumed} resumed" if resumed else text
