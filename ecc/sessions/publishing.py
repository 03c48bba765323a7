"""From a session's worktree to a pull request: commit, push, open (``ecc worktree commit``,
``ecc worktree push``, ``ecc pr``), and ``worktree.auto_commit`` at a session's completion.

Agent CLIs leave their changes uncommitted; these steps turn them into a branch others can
review. Each refuses an active session (its agent is still writing; stop it or wait), records
an event on the session, and fails in one line naming what to do. Commits are made in the
session's worktree with the user's own git identity and hooks. Pushes go from the repository
(the branch is shared with the worktree) and set the branch's upstream, which is how ``ecc
pr`` knows where the branch is. The pull request is opened by a forge plugin (hook
``ecc_open_pull_request``; built in: ``github`` through ``gh``) and its URL is kept on the
session (``pr_url``), so asking again prints it instead of opening another.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions import worktrees

if TYPE_CHECKING:
    from ecc.store.base import Store
    from ecc.store.models import Session

SUBJECT_MAX = 72  # characters of a commit subject or a pull request title
TASK_MAX = 4000  # characters of the task quoted in a commit or pull request body
_CREDENTIALS = re.compile(r"(://[^/@\s]+)@")  # https://user:token@host -> https://***@host


def _refuse_active(session: Session, what: str) -> None:
    if session.active:
        raise EccError(
            f"session {session.id} is {session.state.value}: its agent may still be writing; "
            f"wait for it or stop it (ecc stop {session.id}) before you {what}"
        )


def _repo(session: Session) -> Path:
    return Path(session.repo_root or session.project_dir)


def _branch(session: Session) -> str:
    if not session.worktree_branch:
        raise EccError(f"session {session.id} has no worktree")
    return session.worktree_branch


def _worktree(session: Session) -> Path:
    _branch(session)
    path = Path(session.worktree_path) if session.worktree_path else None
    if path is None or not path.is_dir():
        raise EccError(
            f"the worktree of session {session.id} is gone"
            + (" (sessions on a worker pool commit and push there)" if session.repo_url else "")
        )
    return path


# -- messages ---------------------------------------------------------------------------------


def _clean(text: str) -> str:
    from ecc.runtime.terminal import sanitize

    return sanitize(text).replace("\t", " ")


def _trim(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def task_line(session: Session, limit: int = SUBJECT_MAX) -> str:
    """The task's first non-empty line, on one line and at most ``limit`` characters."""
    first = next((line for line in session.task.splitlines() if line.strip()), session.id)
    return _trim(" ".join(_clean(first).split()), limit)


def _quoted_task(session: Session) -> str:
    """The whole task for a body, when the first line does not already say it all."""
    task = _clean(session.task).strip()
    first = task_line(session, len(task) + 1)
    if " ".join(task.split()) == first and len(f"ecc: {first}") <= SUBJECT_MAX:
        return ""
    return _trim(task, TASK_MAX)


def commit_message(session: Session) -> str:
    """``ecc: <task>`` (72 characters at most), the whole task if longer, and the session."""
    parts = [_trim(f"ecc: {task_line(session, SUBJECT_MAX)}", SUBJECT_MAX)]
    quoted = _quoted_task(session)
    if quoted:
        parts.append(quoted)
    parts.append(f"Session: {session.id}\nHarness: {session.harness}")
    return "\n\n".join(parts) + "\n"


def pull_request_body(session: Session) -> str:
    quoted = _clean(session.task).strip()
    return (
        f"{_trim(quoted, TASK_MAX)}\n\n---\nOpened by ecc from session `{session.id}` "
        f"(harness `{session.harness}`)."
    )


# -- commit -----------------------------------------------------------------------------------


def _commit_in(path: Path, message: str) -> tuple[str, int] | None:
    """Stage everything in the worktree and commit it; (commit, files), or None if clean."""
    pending = worktrees.dirty_files(path)
    if not pending:
        return None
    worktrees.git(path, "add", "--all")
    try:
        worktrees.git(path, "commit", "--quiet", f"--message={message}")
    except worktrees.GitError as exc:
        if "identity" in exc.message or "email" in exc.message:
            raise EccError(
                "git does not know who you are: set user.name and user.email "
                "(git config --global user.email you@example.com)"
            ) from None
        raise
    return worktrees.git(path, "rev-parse", "HEAD").stdout.strip(), len(pending)


def commit(store: Store, session: Session, message: str | None = None) -> dict[str, Any]:
    """Commit every change in the session's worktree (``message``, else one from the task).

    A clean worktree is not an error: ``committed`` is False and nothing is recorded.
    """
    _refuse_active(session, "commit its worktree")
    path = _worktree(session)
    if message is not None:
        message = message.strip()
        if not message:
            raise EccError("the commit message must not be empty")
    text = message if message is not None else commit_message(session)
    made = _commit_in(path, text)
    subject = text.splitlines()[0]
    result: dict[str, Any] = {
        "id": session.id,
        "branch": session.worktree_branch,
        "committed": made is not None,
        "commit": made[0] if made else None,
        "files": made[1] if made else 0,
        "subject": subject,
    }
    if made:
        store.add_event(
            session.id,
            "commit",
            f"committed {made[1]} file(s) as {made[0][:12]}: {subject}",
            {"commit": made[0], "files": made[1]},
        )
    return result


def auto_commit(store: Store, session: Session, config: Any) -> None:
    """``worktree.auto_commit``: commit what the agent left when its session completes.

    Called by the runner before it records the completion; it never raises (a failure is a
    session event, and the session's outcome stays the harness's)."""
    table = getattr(config, "worktree", None)
    if not getattr(table, "auto_commit", False):
        return
    try:
        current = store.get_session(session.id) or session
        if not current.worktree_path or not Path(current.worktree_path).is_dir():
            return  # no worktree: never commit in the user's own checkout
        made = _commit_in(Path(current.worktree_path), commit_message(current))
        if made:
            note = f"worktree.auto_commit: committed {made[1]} file(s) as {made[0][:12]}"
            store.add_event(current.id, "commit", note, {"commit": made[0], "files": made[1]})
    except Exception as exc:
        try:
            store.add_event(session.id, "commit", f"worktree.auto_commit failed: {exc}")
        except Exception:
            pass


# -- push -------------------------------------------------------------------------------------


def _push_default(repo: Path) -> str:
    found = worktrees.git(repo, "config", "--get", "remote.pushDefault", check=False)
    return found.stdout.strip() or "origin"


def _remote_url(repo: Path, remote: str) -> str:
    if not remote or remote.startswith("-"):
        raise EccError(f"invalid remote name {remote!r}")
    found = worktrees.git(repo, "remote", "get-url", "--push", remote, check=False)
    if found.returncode != 0 or not found.stdout.strip():
        raise EccError(
            f"the repository {repo} has no remote {remote!r}: add one "
            f"(git remote add {remote} URL) or pass --remote NAME"
        )
    return found.stdout.strip()


def _push_failure(remote: str, branch: str, result: Any) -> EccError:
    rejected = [line for line in result.stdout.splitlines() if line.startswith("!")]
    if rejected:
        why = rejected[0].split("\t")[-1].strip()
        hint = ""
        if "fetch first" in why or "non-fast-forward" in why:
            hint = " (the remote branch has commits this one lacks)"
        return EccError(f"the push of {branch} to {remote} was rejected: {why}{hint}")
    lines = [ln.strip() for ln in result.stderr.splitlines() if ln.strip()]
    lines = [ln for ln in lines if not ln.startswith("hint:")] or ["error"]
    worst = [ln for ln in lines if ln.startswith(("fatal:", "error:"))] or lines
    return EccError(f"git push to {remote} failed: {_CREDENTIALS.sub('://***@', worst[0])}")


def push(store: Store, session: Session, remote: str | None = None) -> dict[str, Any]:
    """Push the session's branch to ``remote`` (default ``remote.pushDefault``, else
    ``origin``) and make it the branch's upstream."""
    _refuse_active(session, "push its branch")
    branch = _branch(session)
    repo = _repo(session)
    if not worktrees.branch_exists(repo, branch):
        raise EccError(f"branch {branch} no longer exists")
    remote = remote if remote is not None else _push_default(repo)
    _remote_url(repo, remote)
    path = Path(session.worktree_path or os.devnull)  # not a directory: no dirty files
    info = worktrees.status(repo, path, branch, session.base_branch, session.base_commit)
    if info.ahead == 0:
        hint = f"; commit them first (ecc worktree commit {session.id})" if info.dirty else ""
        raise EccError(
            f"branch {branch} has no commits beyond {info.base}"
            + (f" and its worktree has {len(info.dirty)} uncommitted file(s){hint}" if hint else "")
            + ": nothing to push"
        )
    ref = f"refs/heads/{branch}"
    result = worktrees.git(
        repo, "push", "--porcelain", "--set-upstream", remote, f"{ref}:{ref}", check=False
    )
    if result.returncode != 0:
        raise _push_failure(remote, branch, result)
    head = worktrees.git(repo, "rev-parse", ref).stdout.strip()
    store.add_event(
        session.id, "push", f"pushed {branch} ({head[:12]}) to {remote}", {"remote": remote}
    )
    return {
        "id": session.id,
        "branch": branch,
        "remote": remote,
        "commit": head,
        "uncommitted": len(info.dirty),
    }


# -- pull request -----------------------------------------------------------------------------


def _pushed_remote(session: Session, repo: Path, branch: str) -> str:
    """The remote the branch was pushed to, refusing a branch not pushed or pushed behind."""
    remote = worktrees.git(repo, "config", "--get", f"branch.{branch}.remote", check=False)
    name = remote.stdout.strip()
    if not name:
        raise EccError(
            f"branch {branch} is not pushed yet: run ecc worktree push {session.id} first"
        )
    local = worktrees.git(repo, "rev-parse", f"refs/heads/{branch}").stdout.strip()
    upstream = worktrees.git(
        repo, "rev-parse", "--verify", "-q", f"{branch}@{{upstream}}", check=False
    )
    if upstream.stdout.strip() != local:
        raise EccError(
            f"branch {branch} has commits not pushed to {name}: run ecc worktree push "
            f"{session.id} first"
        )
    return name


def open_pull_request(
    store: Store,
    session: Session,
    config: Any,
    *,
    draft: bool = False,
    base: str | None = None,
    title: str | None = None,
) -> dict[str, Any]:
    """Open a pull request for the session's pushed branch through the forge plugins, and
    record its URL; a session with a recorded URL answers with it and opens nothing."""
    if session.pr_url:
        return {"id": session.id, "url": session.pr_url, "created": False}
    _refuse_active(session, "open a pull request")
    branch = _branch(session)
    repo = _repo(session)
    if not worktrees.branch_exists(repo, branch):
        raise EccError(f"branch {branch} no longer exists")
    base = base or session.base_branch
    if not base:
        raise EccError("the session started from a detached HEAD: pass --base BRANCH")
    remote = _pushed_remote(session, repo, branch)
    title = " ".join((title or "").split()) or task_line(session)
    from ecc.contract.types import PullRequestProposal
    from ecc.runtime.plugins.loader import get_plugins

    worktree = Path(session.worktree_path) if session.worktree_path else None
    proposal = PullRequestProposal(
        session_id=session.id,
        repo_root=repo,
        remote=remote,
        remote_url=_remote_url(repo, remote),
        branch=branch,
        base=base,
        title=title,
        body=pull_request_body(session),
        draft=draft,
        worktree_path=worktree if worktree is not None and worktree.is_dir() else None,
    )
    try:
        opened = get_plugins(config).hook.ecc_open_pull_request(proposal=proposal, config=config)
    except EccError:
        raise
    except Exception as exc:  # a plugin's bug: one line, not a traceback
        raise EccError(f"opening the pull request failed: {type(exc).__name__}: {exc}") from None
    url = str(getattr(opened, "url", "") or "").strip() if opened is not None else ""
    if opened is None:
        raise EccError(
            f"no installed forge plugin opens pull requests for the remote {remote} "
            "(the built-in github plugin needs a GitHub remote and gh)"
        )
    if not url or len(url.split()) != 1:
        raise EccError("the forge plugin returned no pull request URL")
    store.update_session(session.id, pr_url=url)
    store.add_event(
        session.id,
        "pull_request",
        f"pull request opened: {url}",
        {"url": url, "forge": getattr(opened, "forge", ""), "draft": draft, "base": base},
    )
    return {"id": session.id, "url": url, "created": True, "draft": draft, "base": base}
