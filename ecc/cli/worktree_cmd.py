"""``ecc worktree list|status|diff|commit|push|merge|prune``: the git side of sessions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    return open_store(config=config), config


def _session_with_worktree(store: Any, ref: str) -> Any:
    from ecc.contract.errors import EccError
    from ecc.sessions.manager import find

    session = find(store, ref)
    if not session.worktree_branch:
        raise EccError(f"session {session.id} has no worktree")
    if session.repo_url and _repo(session).is_dir():
        # ran on a worker of a pool: its branch was pushed to the remote; bring it here
        from ecc.sessions import mirrors

        mirrors.fetch_session_branch(_repo(session), session.repo_url, session.worktree_branch)
    return session


def _repo(session: Any) -> Path:
    return Path(session.repo_root or session.project_dir)


def _status(session: Any) -> Any:
    from ecc.sessions import worktrees

    return worktrees.status(
        _repo(session),
        Path(session.worktree_path),
        session.worktree_branch,
        session.base_branch,
        session.base_commit,
    )


@click.group("worktree")
def worktree_group() -> None:
    """Inspect, diff, commit, push, merge and prune session worktrees."""


@worktree_group.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """Sessions that have a worktree, with ahead/behind and dirty counts."""
    store, _ = _open()
    rows = []
    for session in store.list_sessions():
        if not session.worktree_branch:
            continue
        try:
            info = _status(session).as_dict()
        except Exception as exc:  # a deleted repository must not hide the others
            info = {"error": str(exc)}
        rows.append({"id": session.id, "state": session.state.value, **info})
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("No session worktrees.")
    for row in rows:
        if "error" in row:
            say(f"{row['id']}  {row['state']:<9} error: {row['error']}")
            continue
        where = row["path"] if row["exists"] else "(worktree removed)"
        say(
            f"{row['id']}  {row['state']:<9} {row['branch']}  +{row['ahead']}/-{row['behind']}  "
            f"{len(row['dirty'])} dirty  {where}"
        )


@worktree_group.command("status")
@click.argument("session_ref", metavar="ID")
@json_option
def status_command(session_ref: str, as_json: bool) -> None:
    """Ahead/behind, dirty files and mergeability of a session's worktree."""
    from ecc.sessions import worktrees

    store, _ = _open()
    session = _session_with_worktree(store, session_ref)
    info = _status(session)
    merge = None
    if info.branch_exists:
        merge = worktrees.mergeability(_repo(session), session.worktree_branch, info.base)
    if as_json:
        emit_json(
            {"id": session.id, **info.as_dict(), "mergeable": merge.as_dict() if merge else None}
        )
        return
    say(f"Session:   {session.id} ({session.state.value})")
    say(f"Worktree:  {info.path}{'' if info.exists else ' (removed)'}")
    say(
        f"Branch:    {info.branch} vs {info.base}: {info.ahead} ahead, {info.behind} behind"
        + (" (merged)" if info.merged else "")
    )
    say(f"Dirty:     {len(info.dirty)} file(s)")
    for line in info.dirty[:20]:
        say(f"  {line}")
    if merge is not None:
        say(
            "Merge:     clean"
            if merge.clean
            else "Merge:     conflicts in " + ", ".join(merge.conflicts)
        )


@worktree_group.command("diff")
@click.argument("session_ref", metavar="ID")
@click.option("--no-pager", is_flag=True, help="Print straight to the terminal, not a pager.")
@json_option
def diff_command(session_ref: str, no_pager: bool, as_json: bool) -> None:
    """The session's changes against its base: commits, then uncommitted work.

    On a terminal: coloured (unless NO_COLOR is set) and through $PAGER."""
    from ecc.sessions import worktrees

    store, _ = _open()
    session = _session_with_worktree(store, session_ref)
    text = worktrees.diff(
        _repo(session),
        Path(session.worktree_path),
        session.worktree_branch,
        session.base_branch,
        session.base_commit,
    )
    if as_json:
        emit_json({"id": session.id, "diff": text})
        return
    from ecc.cli.paging import show_diff

    show_diff(text, pager=not no_pager)


@worktree_group.command("commit")
@click.argument("session_ref", metavar="ID")
@click.option("-m", "--message", help="The commit message (default: one made from the task).")
@json_option
def commit_command(session_ref: str, message: str | None, as_json: bool) -> None:
    """Commit everything the agent changed in a finished session's worktree.

    A clean worktree commits nothing and is not an error (exit 0).
    """
    from ecc.sessions import publishing

    store, _ = _open()
    session = _session_with_worktree(store, session_ref)
    result = publishing.commit(store, session, message)
    if as_json:
        emit_json(result)
    elif not result["committed"]:
        say(f"Nothing to commit: the worktree of session {session.id} is clean.")
    else:
        say(
            f"Committed {result['files']} file(s) on {result['branch']} as "
            f"{result['commit'][:12]}: {result['subject']}"
        )


@worktree_group.command("push")
@click.argument("session_ref", metavar="ID")
@click.option("--remote", help="The remote to push to (default: remote.pushDefault, else origin).")
@json_option
def push_command(session_ref: str, remote: str | None, as_json: bool) -> None:
    """Push a finished session's branch and make it the branch's upstream."""
    from ecc.sessions import publishing

    store, _ = _open()
    session = _session_with_worktree(store, session_ref)
    result = publishing.push(store, session, remote)
    if as_json:
        emit_json(result)
        return
    say(f"Pushed {result['branch']} ({result['commit'][:12]}) to {result['remote']}.")
    if result["uncommitted"]:
        say(
            f"Note: {result['uncommitted']} uncommitted file(s) in the worktree were not pushed "
            f"(ecc worktree commit {session.id})",
            err=True,
        )


@worktree_group.command("merge")
@click.argument("session_ref", metavar="ID")
@json_option
def merge_command(session_ref: str, as_json: bool) -> None:
    """Merge a finished session's branch into its base branch, only when clean."""
    from ecc.contract.errors import EccError
    from ecc.sessions import worktrees

    store, _ = _open()
    session = _session_with_worktree(store, session_ref)
    if not session.terminal:
        raise EccError(f"session {session.id} is {session.state.value}; wait for it or stop it")
    result = worktrees.merge(
        _repo(session), Path(session.worktree_path), session.worktree_branch, session.base_branch
    )
    store.add_event(session.id, "worktree", f"merged {result['branch']} into {result['base']}")
    if as_json:
        emit_json({"id": session.id, **result})
    elif result["already_up_to_date"]:
        say(f"{result['base']} already contains {result['branch']}.")
    else:
        say(f"Merged {result['branch']} into {result['base']} ({result['after'][:12]}).")


@worktree_group.command("prune")
@click.argument("session_ref", metavar="[ID]", required=False)
@click.option("--merged", is_flag=True, help="Finished sessions whose branch is merged.")
@click.option("--finished", is_flag=True, help="All finished sessions, whatever their age.")
@json_option
def prune_command(session_ref: str | None, merged: bool, finished: bool, as_json: bool) -> None:
    """Remove finished sessions' worktrees (default: older than worktree_retention_secs).

    Uncommitted work is never deleted, and a branch is deleted only when merged into its base.
    """
    from ecc.contract.errors import EccError
    from ecc.sessions import worktrees
    from ecc.sessions.daemon import prune

    store, config = _open()
    if sum(bool(x) for x in (session_ref, merged, finished)) > 1:
        raise EccError("give one of ID, --merged or --finished")
    if session_ref:
        session = _session_with_worktree(store, session_ref)
        if not session.terminal:
            raise EccError(f"session {session.id} is {session.state.value}; it keeps its worktree")
        outcome = worktrees.remove(
            _repo(session),
            Path(session.worktree_path),
            session.worktree_branch,
            session.base_branch or session.base_commit,
        )
        results = [{"id": session.id, **outcome.as_dict()}]
    elif merged:
        results = []
        for session in store.list_sessions():
            if not (session.terminal and session.worktree_branch):
                continue
            info = _status(session)
            if info.branch_exists and info.merged:
                outcome = worktrees.remove(
                    _repo(session), Path(session.worktree_path), session.worktree_branch, info.base
                )
                results.append({"id": session.id, **outcome.as_dict()})
    else:
        results = prune(store, config, force_all=finished)
    if as_json:
        emit_json(results)
        return
    if not results:
        say("Nothing to prune.")
    for row in results:
        done = ("worktree removed" if row["worktree_removed"] else "worktree kept") + (
            ", branch deleted" if row["branch_deleted"] else ""
        )
        say(f"{row['id']}: {done}" + (f" ({row['kept_reason']})" if row["kept_reason"] else ""))
