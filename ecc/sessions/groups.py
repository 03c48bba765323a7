"""Session groups: several sessions on one task, compared side by side, one of them picked.

``ecc run --harness a,b --count N`` (kind ``fanout``) and ``ecc run --template NAME`` (kinds
``set`` and ``sequence``) record a group (:mod:`ecc.store.groups`) and start its members through
:func:`ecc.sessions.service.start`, each in its own worktree by default. A ``set`` or fan-out
starts every member at once. A ``sequence`` starts its first step; :func:`advance` starts each
next one when the one before it completed and its check passed (or skips the rest, saying why).
``advance`` runs where queued work is dispatched: a runner as soon as its session's end is
recorded and again when its run ends, the daemon's dispatch step, a read that found a dead
runner. The step to start is claimed with a conditional update, so two never start it twice.

The check command (``--check``, or a template's ``check``) runs in a member's worktree when its
harness exits on its own (:mod:`ecc.sessions.group_checks`, called by the runner before it
records the end), bounded by the group's timeout, its exit code and output tail kept on the
member. It is trusted: it comes from the user's command line or from a template, and templates
are a guarded key.

:func:`pick` merges one member's branch (committing what its agent left, then ``ecc worktree
merge``'s checks and merge) and removes every other member's worktree and branch.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions.templates import Member
from ecc.store.models import TERMINAL, State

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecc.store.base import Store
    from ecc.store.models import Session

KINDS = ("fanout", "set", "sequence")
MAX_MEMBERS = 32
GROUP_ID_BYTES = 4  # 8 hex digits; a unique prefix addresses a group
STARTING_GRACE_SECS = 600.0  # a claim this old without its session lost its starter


def fan_out(task: str, harness: str | None, count: int | None) -> list[Member]:
    """``count`` members (default: one per harness) on ``task``, the comma-separated harnesses
    taken in turn (``claude,codex`` with 4: claude, codex, claude, codex)."""
    names: list[str | None] = [None]
    if harness is not None:
        names = [part.strip() for part in harness.split(",")]
        if not all(names):
            raise EccError(f"--harness {harness!r} has an empty name")
    total = len(names) if count is None else count
    if not 1 <= total <= MAX_MEMBERS:
        raise EccError(f"--count must be between 1 and {MAX_MEMBERS}")
    if total < len(names):
        raise EccError(f"--count {total} is fewer than the {len(names)} harnesses given")
    return [Member(task=task, harness=names[index % len(names)]) for index in range(total)]


def _validate(store: Store, members: list[Member], config: Any, cwd: Path) -> None:
    """Refuse, before anything is written, what ``manager.create`` would refuse for a member."""
    from ecc.runtime.config.profiles import resolve_profile
    from ecc.sessions import harnesses

    if not cwd.is_dir():
        raise EccError(f"directory {cwd} does not exist")
    for member in members:
        if not member.task.strip():
            raise EccError("the task must not be empty")
        profile_name = member.profile or config.default_profile
        profile = resolve_profile(config.agent_profiles, profile_name) if profile_name else None
        wanted = member.harness or (profile or {}).get("harness") or config.default_harness
        if wanted:
            harnesses.canonical_name(wanted, config)
    default = config.auto_create_worktrees
    if any(default if m.use_worktree is None else m.use_worktree for m in members):
        from ecc.sessions import worktrees

        worktrees.repo_info(cwd)
    if config.budget_action == "stop":
        from ecc.observability import budgets

        budgets.refuse_start(store, config)


def start(
    store: Store,
    config: Any,
    members: list[Member],
    *,
    kind: str,
    name: str = "",
    template: str | None = None,
    check: str | None = None,
    check_timeout: float = 600.0,
    cwd: Path | None = None,
    executor: str | None = None,
    warn: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Record the group and start its members (a sequence: its first); returns the group.

    Bad input is refused with nothing written. A member that cannot start is recorded as
    ``failed`` with the reason; the others still start (a sequence skips its later steps).
    """
    if kind not in KINDS:
        raise ValueError(f"unknown group kind {kind!r}")
    if not members:
        raise EccError("a group needs at least one session")
    if len(members) > MAX_MEMBERS:
        raise EccError(f"a group has at most {MAX_MEMBERS} sessions")
    if check is not None and not check.strip():
        raise EccError("--check must not be empty")
    if not check_timeout > 0:
        raise EccError("--check-timeout must be more than 0 seconds")
    where = (cwd or Path.cwd()).expanduser()
    _validate(store, members, config, where)
    where = where.resolve()
    fields = {
        "name": name.strip(),
        "kind": kind,
        "template": template,
        "project_dir": str(where),
        "check_command": check.strip() if check else None,
        "check_timeout_secs": float(check_timeout),
        "executor": executor,
    }
    rows = [{**member.row(), "status": "waiting"} for member in members]
    for _ in range(5):
        group = store.insert_group(os.urandom(GROUP_ID_BYTES).hex(), rows, **fields)
        if group is not None:
            break
    else:
        raise EccError("could not allocate a unique group id")
    first_only = kind == "sequence"
    for row in group["members"]:
        _start_member(store, config, group, row, warn=warn)
        if first_only:
            break
    if first_only:
        _skip_after_failure(store, group["id"])
    found = store.get_group(group["id"])
    assert found is not None
    return found


def _start_member(
    store: Store,
    config: Any,
    group: dict[str, Any],
    row: dict[str, Any],
    *,
    warn: Callable[[str], None] | None = None,
) -> str | None:
    """Claim a waiting member and start its session; returns the session id (None when it did
    not start: another process claimed it, or starting failed, recorded on the member)."""
    from ecc.sessions import manager, service

    gid, position = group["id"], row["position"]
    if not store.update_member(gid, position, expect="waiting", status="starting"):
        return None
    label = f"group {gid} #{position}" + (f" {row['step_name']}" if row["step_name"] else "")
    use_worktree = None if row["use_worktree"] is None else bool(row["use_worktree"])
    request = manager.Request(
        task=row["task"],
        harness=row["harness"],
        profile=row["profile_name"],
        use_worktree=use_worktree,
        name=label,
        cwd=Path(group["project_dir"]),
        executor=group["executor"],
    )

    def joined(session: Session) -> None:  # before its runner can end and look for its check
        store.update_member(gid, position, session_id=session.id, status="started")

    try:
        session = service.start(store, request, config, warn=warn, created=joined)
    except service.NotStarted as exc:
        failed = {"session_id": exc.session.id, "status": "failed", "note": exc.message}
        store.update_member(gid, position, **failed)
        return None
    except EccError as exc:
        store.update_member(gid, position, status="failed", note=exc.message)
        return None
    except Exception as exc:  # never leave it "starting": the group would never finish
        store.update_member(gid, position, status="failed", note=f"could not start: {exc}")
        return None
    return str(session.id)


def _skip_after_failure(store: Store, group_id: str) -> None:
    """In a sequence, a step that could not start ends it: the later steps are skipped."""
    group = store.get_group(group_id)
    if group is None:
        return
    for row in group["members"]:
        if row["status"] == "failed":
            _skip_rest(store, group, row["position"], f"step {row['position']} did not start")
            return


def _skip_rest(store: Store, group: dict[str, Any], after: int, why: str) -> None:
    for row in group["members"]:
        if row["position"] > after and row["status"] == "waiting":
            skipped = {"status": "skipped", "note": why}
            store.update_member(group["id"], row["position"], expect="waiting", **skipped)


def advance(store: Store, config: Any) -> list[str]:
    """Start the next step of every sequence whose previous step succeeded (completed, and its
    check passed when the group has one); skip the rest of one whose step did not. Returns the
    ids of the sessions started."""
    started = []
    _fail_stale_claims(store)
    for gid in store.groups_waiting():
        group = store.get_group(gid)
        if group is None:
            continue
        waiting = next(row for row in group["members"] if row["status"] == "waiting")
        previous = next(
            (row for row in group["members"] if row["position"] == waiting["position"] - 1), None
        )
        if previous is None or previous["status"] in ("waiting", "starting"):
            continue
        number = previous["position"]
        if previous["status"] != "started":
            _skip_rest(store, group, number, f"step {number} was {previous['status']}")
            continue
        session = store.get_session(previous["session_id"])
        if session is None:
            _skip_rest(store, group, number, f"step {number}'s session was removed")
            continue
        if session.state not in TERMINAL:
            continue
        if session.state != State.COMPLETED:
            _skip_rest(store, group, number, f"step {number} {session.state.value}")
            continue
        if group["check_command"] and previous["check_state"] != "passed":
            outcome = previous["check_state"] or "not run"
            _skip_rest(store, group, number, f"step {number}'s check {outcome}")
            continue
        session_id = _start_member(store, config, group, waiting)
        if session_id is not None:
            started.append(session_id)
        else:
            _skip_after_failure(store, gid)
    return started


def _fail_stale_claims(store: Store) -> None:
    """A member claimed long ago and still without its session: the process starting it was
    killed between the claim and the record. Failed, so its group ends (or its sequence skips
    the rest) instead of waiting for ever."""
    from ecc.store.models import iso_from_epoch

    before = iso_from_epoch(time.time() - STARTING_GRACE_SECS)
    for gid, position in store.stale_claims(before):
        note = "the process starting it ended before its session was recorded"
        if store.update_member(gid, position, expect="starting", status="failed", note=note):
            _skip_after_failure(store, gid)


def finished(group: dict[str, Any], sessions: dict[str, Session | None]) -> bool:
    """Whether nothing more will happen in the group: no step waiting, every session ended."""
    for row in group["members"]:
        if row["status"] in ("waiting", "starting"):
            return False
        if row["status"] == "started":
            session = sessions.get(row["session_id"])
            if session is not None and session.state not in TERMINAL:
                return False
    return True


# -- what a group shows ------------------------------------------------------------------------


def changes(session: Session) -> dict[str, int] | None:
    """Files changed and lines added and deleted by the session against its base commit:
    commits and uncommitted work, untracked files included; None without a worktree or branch.
    Reads only (never touches the worktree's index, which its agent may be using)."""
    from ecc.sessions import worktrees

    if not session.worktree_branch or not session.base_commit:
        return None
    path = Path(session.worktree_path or "")
    repo = Path(session.repo_root or session.project_dir)
    if session.worktree_path and path.is_dir():
        numstat = worktrees.git(path, "diff", "--numstat", session.base_commit, check=False)
        untracked = worktrees.git(
            path, "ls-files", "-z", "--others", "--exclude-standard", check=False
        ).stdout.split("\0")
    elif repo.is_dir() and worktrees.branch_exists(repo, session.worktree_branch):
        numstat = worktrees.git(
            repo, "diff", "--numstat", session.base_commit, session.worktree_branch, check=False
        )
        untracked = []
    else:
        return None
    files = added = deleted = 0
    for line in numstat.stdout.splitlines():
        parts = line.split("\t", 2)
        if len(parts) == 3:
            files += 1
            added += int(parts[0]) if parts[0].isdigit() else 0
            deleted += int(parts[1]) if parts[1].isdigit() else 0
    for name in filter(None, untracked):
        files += 1
        added += _lines(path / name)
    return {"files": files, "added": added, "deleted": deleted}


def _lines(path: Path, limit: int = 4 * 1024 * 1024) -> int:
    """Lines of an untracked text file as git would count them (0 for a binary one)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit)
    except OSError:
        return 0
    if b"\0" in data:
        return 0
    return data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)


def report(store: Store, group: dict[str, Any], with_changes: bool = True) -> dict[str, Any]:
    """The group as ``ecc group ID --json`` prints it: each member with its session's state,
    changes, tokens, cost and check."""
    sessions = {
        row["session_id"]: store.get_session(row["session_id"])
        for row in group["members"]
        if row["session_id"]
    }
    members = []
    for row in group["members"]:
        session = sessions.get(row["session_id"]) if row["session_id"] else None
        member: dict[str, Any] = {
            "position": row["position"],
            "step": row["step_name"],
            "status": row["status"],
            "note": row["note"],
            "session_id": row["session_id"],
            "harness": session.harness if session else row["harness"],
            "state": _member_state(row, session),
            "reason": session.reason if session else row["note"],
            "worktree": session.worktree_path if session else None,
            "branch": session.worktree_branch if session else None,
            "changes": changes(session) if with_changes and session else None,
            "tokens": (session.input_tokens + session.output_tokens) if session else 0,
            "cost_usd": session.cost_usd if session else 0.0,
            "check": None
            if row["check_state"] is None
            else {
                "state": row["check_state"],
                "exit_code": row["check_exit_code"],
                "seconds": row["check_seconds"],
                "output_tail": row["check_output"] or "",
            },
            "picked": bool(group["picked_session_id"])
            and group["picked_session_id"] == row["session_id"],
        }
        members.append(member)
    shown = {key: value for key, value in group.items() if key != "members"}
    first_task = group["members"][0]["task"] if group["members"] else ""
    return {
        **shown,
        "title": shown["name"] or (first_task.splitlines() or [""])[0][:60],
        "state": group_state(group, sessions),
        "members": members,
    }


def sessions_state(sessions: list[Session] | tuple[Session, ...]) -> str:
    """One word for sessions shown together (a group's row in the dashboard and the web page):
    ``running`` while one is active, ``completed`` when all completed, else ``failed``."""
    from ecc.store.models import ACTIVE

    if any(session.state in ACTIVE for session in sessions):
        return "running"
    if all(session.state == State.COMPLETED for session in sessions):
        return "completed"
    return "failed"


def _member_state(row: dict[str, Any], session: Session | None) -> str:
    if session is not None:
        return str(session.display_state)
    if row["status"] == "started":
        return "removed"  # its session was forgotten (ecc rm)
    return str(row["status"])


def group_state(group: dict[str, Any], sessions: dict[str, Session | None]) -> str:
    """One word for the group: ``picked``, ``running`` (something active or waiting), else
    ``completed`` when every member completed, else ``failed``."""
    if group["picked_session_id"]:
        return "picked"
    if not finished(group, sessions):
        return "running"
    for row in group["members"]:
        session = sessions.get(row["session_id"]) if row["session_id"] else None
        if session is None or session.state != State.COMPLETED:
            return "failed"
        if row["check_state"] not in (None, "passed"):
            return "failed"
    return "completed"


# -- pick --------------------------------------------------------------------------------------


def _member_session(store: Store, group: dict[str, Any], ref: str) -> Session:
    """The member session ``ref`` names: a session id or a unique prefix of one in the group."""
    ref = ref.strip()
    ids = [row["session_id"] for row in group["members"] if row["session_id"]]
    matches = [sid for sid in ids if sid == ref]
    matches = matches or [sid for sid in ids if ref and sid.startswith(ref)]
    if len(matches) != 1:
        listed = ", ".join(ids) or "none"
        what = "names several" if matches else "is not a session"
        raise EccError(f"{ref!r} {what} of group {group['id']} (its sessions: {listed})")
    session = store.get_session(matches[0])
    if session is None:
        raise EccError(f"session {matches[0]} was removed")
    return session


def pick(store: Store, group: dict[str, Any], ref: str) -> dict[str, Any]:
    """Merge the member ``ref`` into its base branch and remove the other members' worktrees
    and branches (their uncommitted work too: they are the ones not picked). Refused, with
    nothing changed, while a member is active or a step waits, when one was picked already,
    or when the merge would not be clean."""
    from ecc.sessions import publishing, worktrees

    if group["picked_session_id"]:
        raise EccError(f"group {group['id']} already picked session {group['picked_session_id']}")
    chosen = _member_session(store, group, ref)
    others: list[Session] = []
    for row in group["members"]:
        if row["status"] in ("waiting", "starting"):
            raise EccError(f"group {group['id']} still has step {row['position']} to run")
        session = store.get_session(row["session_id"]) if row["session_id"] else None
        if session is None:
            continue
        if session.state not in TERMINAL:
            raise EccError(
                f"session {session.id} of group {group['id']} is {session.state.value}; "
                "wait for it or stop it"
            )
        if session.id != chosen.id:
            others.append(session)
    if not chosen.worktree_branch or not chosen.worktree_path:
        raise EccError(f"session {chosen.id} has no worktree to merge")
    repo = Path(chosen.repo_root or chosen.project_dir)
    committed = None
    if Path(chosen.worktree_path).is_dir() and worktrees.dirty_files(Path(chosen.worktree_path)):
        worktrees.merge_preflight(repo, chosen.worktree_branch, chosen.base_branch)
        committed = publishing.commit(store, chosen)
    merged = worktrees.merge(
        repo, Path(chosen.worktree_path), chosen.worktree_branch, chosen.base_branch
    )
    into = f"merged {merged['branch']} into {merged['base']}"
    store.add_event(chosen.id, "worktree", f"picked in group {group['id']}: {into}")
    store.record_pick(group["id"], chosen.id)
    removed = []
    for session in others:
        if not session.worktree_branch:
            continue
        outcome = worktrees.remove(
            Path(session.repo_root or session.project_dir),
            Path(session.worktree_path or ""),
            session.worktree_branch,
            session.base_branch or session.base_commit,
            discard=True,
        )
        gone = "worktree and branch removed"
        store.add_event(session.id, "worktree", f"not picked in group {group['id']}: {gone}")
        removed.append({"id": session.id, **outcome.as_dict()})
    return {
        "group": group["id"],
        "picked": chosen.id,
        "committed": committed,
        "merge": merged,
        "removed": removed,
    }
