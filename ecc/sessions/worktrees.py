"""Session worktrees through the git CLI (the same commands a person would type to reproduce).

Layout: ``<data dir>/worktrees/<repo-slug>-<hash>/<session-id>`` on branch ``ecc/<session-id>``
(the prefix is ``worktree_branch_prefix``), created from the base commit recorded when the session
was made. Rules that protect work:

* nothing here deletes a branch with commits the base does not have (``git branch -d`` only);
* a worktree with uncommitted changes is never removed;
* a merge happens only when ``git merge-tree --write-tree`` says it is clean, the base checkout is
  on the base branch, and both trees are clean.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError

if TYPE_CHECKING:
    from ecc.contract.types import Config

MIN_MERGE_TREE = (2, 38)


class GitError(EccError):
    """A git command failed; the message carries git's own words."""


def git(cwd: Path | str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    try:
        result = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            errors="replace",
            stdin=subprocess.DEVNULL,
        )
    except FileNotFoundError:
        raise GitError("git is not installed or not on PATH") from None
    if check and result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])} failed: {detail[-1] if detail else 'error'}")
    return result


@dataclass
class RepoInfo:
    root: Path
    head_commit: str
    head_branch: str | None  # None on a detached HEAD


def repo_info(path: Path) -> RepoInfo:
    """The repository containing ``path``; refuses clearly outside one or before a first commit."""
    if not path.is_dir():
        raise EccError(f"directory {path} does not exist")
    # One git process (this runs on every ``ecc run``): the top level, then the commit HEAD
    # points to, then HEAD shortened as ``git symbolic-ref --short`` does (``HEAD`` when
    # detached; no branch can be called HEAD). Output stops at the first failure, so a
    # repository without commits still prints its top level, and a non-repository nothing.
    result = git(
        path,
        "rev-parse",
        "--show-toplevel",
        "HEAD^{commit}",
        "--abbrev-ref=loose",
        "HEAD",
        "--",
        check=False,
    )
    lines = result.stdout.splitlines()
    if not lines or not lines[0].strip():
        raise EccError(
            f"{path} is not inside a git repository (use --no-worktree to run there anyway)"
        )
    root = Path(lines[0].strip())
    if result.returncode != 0 or len(lines) < 3:
        raise EccError(f"the repository {root} has no commits yet; commit something first")
    branch = lines[2].strip()
    return RepoInfo(root, lines[1].strip(), None if branch == "HEAD" else branch or None)


def remote_url(repo_root: Path, remote: str = "origin") -> str:
    """The URL workers fetch the repository from (a session on a worker pool needs one)."""
    result = git(repo_root, "remote", "get-url", remote, check=False)
    url = result.stdout.strip()
    if result.returncode != 0 or not url:
        raise EccError(
            f"the repository {repo_root} has no remote {remote!r}: sessions on a worker pool "
            "check out the base commit from the repository's remote (git remote add origin URL)"
        )
    return url


def worktree_root(config: Config) -> Path:
    if config.worktree_root:
        return Path(config.worktree_root).expanduser()
    from ecc.runtime import paths

    return paths.data_dir() / "worktrees"


def private_parent(path: Path, config: Config | None = None) -> None:
    """Create ``path``'s parent, each new level 0700 (worktrees hold the user's code); for a
    worktree, also tighten ecc's own levels above it that an older ecc left 0755."""
    from ecc.runtime import paths

    paths.ensure_private_dir(path.parent)
    if config is not None:
        paths.make_private(worktree_root(config))
        if not config.worktree_root:
            paths.make_private(paths.data_dir())


def repo_key(repo_root: Path) -> str:
    """``<slug>-<hash>``: readable, and unique per repository path."""
    resolved = str(repo_root.resolve())
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", repo_root.name).strip("-")[:40] or "repo"
    from ecc.runtime.paths import sha256_hex

    return f"{slug}-{sha256_hex(resolved)[:10]}"


def branch_name(session_id: str, config: Config) -> str:
    return f"{config.worktree_branch_prefix}/{session_id}"


def worktree_path(repo_root: Path, session_id: str, config: Config) -> Path:
    return worktree_root(config) / repo_key(repo_root) / session_id


def create(repo_root: Path, session_id: str, base_commit: str, config: Config) -> tuple[Path, str]:
    """Add the session's worktree on a new branch at ``base_commit``; return (path, branch)."""
    branch = branch_name(session_id, config)
    if git(repo_root, "check-ref-format", "--branch", branch, check=False).returncode != 0:
        raise EccError(f"invalid worktree branch name {branch!r} (check worktree_branch_prefix)")
    path = worktree_path(repo_root, session_id, config)
    private_parent(path, config)
    with _worktrees_lock(repo_root):
        git(repo_root, "worktree", "add", "-q", "-b", branch, str(path), base_commit)
    return path, branch


def restore(repo_root: Path, path: Path, branch: str) -> None:
    """Re-create a removed worktree from its surviving branch (used by resume)."""
    if git(
        repo_root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False
    ).returncode:
        raise EccError(f"branch {branch} no longer exists; cannot restore its worktree")
    private_parent(path)
    with _worktrees_lock(repo_root):
        git(repo_root, "worktree", "prune")
        git(repo_root, "worktree", "add", "-q", str(path), branch)


def _base_ref(repo_root: Path, base_branch: str | None, base_commit: str | None) -> str:
    if (
        base_branch
        and not git(
            repo_root, "rev-parse", "--verify", "-q", f"refs/heads/{base_branch}", check=False
        ).returncode
    ):
        return base_branch
    if base_commit:
        return base_commit
    raise EccError("the session records no base branch or commit")


@dataclass
class Status:
    path: str
    branch: str
    base: str
    exists: bool
    branch_exists: bool
    ahead: int = 0
    behind: int = 0
    dirty: list[str] = field(default_factory=list)
    merged: bool = False

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def branch_exists(repo_root: Path, branch: str) -> bool:
    result = git(repo_root, "rev-parse", "--verify", "-q", f"refs/heads/{branch}", check=False)
    return result.returncode == 0


def is_merged(repo_root: Path, branch: str, base: str) -> bool:
    """True when every commit of ``branch`` is already in ``base``."""
    result = git(repo_root, "merge-base", "--is-ancestor", branch, base, check=False)
    return result.returncode == 0


def dirty_files(path: Path) -> list[str]:
    out = git(path, "status", "--porcelain", "--untracked-files=all").stdout
    return [line for line in out.splitlines() if line.strip()]


def status(
    repo_root: Path, path: Path, branch: str, base_branch: str | None, base_commit: str | None
) -> Status:
    base = _base_ref(repo_root, base_branch, base_commit)
    report = Status(str(path), branch, base, path.is_dir(), branch_exists(repo_root, branch))
    if report.branch_exists:
        counts = git(repo_root, "rev-list", "--left-right", "--count", f"{base}...{branch}")
        behind, ahead = (int(part) for part in counts.stdout.split())
        report.ahead, report.behind = ahead, behind
        report.merged = is_merged(repo_root, branch, base)
    if report.exists:
        report.dirty = dirty_files(path)
    return report


def diff(
    repo_root: Path, path: Path, branch: str, base_branch: str | None, base_commit: str | None
) -> str:
    """Committed changes of the branch against the base, then uncommitted ones in the worktree."""
    base = _base_ref(repo_root, base_branch, base_commit)
    parts = []
    if branch_exists(repo_root, branch):
        committed = git(repo_root, "diff", "--find-renames", f"{base}...{branch}").stdout
        if committed:
            parts.append(committed)
    if path.is_dir():
        git(path, "add", "--intent-to-add", "--all", check=False)  # show untracked files too
        working = git(path, "diff", "--find-renames", "HEAD").stdout
        if working:
            parts.append(working)
    return "".join(parts)


def git_version() -> tuple[int, int]:
    out = git(".", "--version").stdout
    match = re.search(r"(\d+)\.(\d+)", out)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


@dataclass
class Mergeability:
    clean: bool
    conflicts: list[str]
    base: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def mergeability(repo_root: Path, branch: str, base: str) -> Mergeability:
    """Would merging ``branch`` into ``base`` conflict? Asked without touching any checkout."""
    if git_version() < MIN_MERGE_TREE:
        raise EccError(
            "checking mergeability needs git 2.38 or newer (git merge-tree --write-tree)"
        )
    result = git(
        repo_root,
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        base,
        branch,
        check=False,
    )
    if result.returncode == 0:
        return Mergeability(True, [], base)
    if result.returncode == 1:
        lines = result.stdout.splitlines()[1:]  # first line: the tree id
        return Mergeability(False, sorted({line for line in lines if line.strip()}), base)
    raise GitError(f"git merge-tree failed: {result.stderr.strip()}")


def merge_preflight(repo_root: Path, branch: str, base_branch: str | None) -> str:
    """Refuse a merge of ``branch`` the main checkout cannot take: a detached base, a missing
    branch, a checkout on another branch or with uncommitted changes. Returns the base."""
    if not base_branch:
        raise EccError("the session started from a detached HEAD; merge its branch by hand")
    if not branch_exists(repo_root, branch):
        raise EccError(f"branch {branch} does not exist")
    current = git(repo_root, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if current != base_branch:
        raise EccError(
            f"{repo_root} is on {current or 'a detached HEAD'}, not {base_branch}; "
            f"check out {base_branch} to merge"
        )
    base_dirty = [
        line
        for line in git(
            repo_root, "status", "--porcelain", "--untracked-files=no"
        ).stdout.splitlines()
        if line.strip()
    ]
    if base_dirty:
        raise EccError(
            f"the base checkout {repo_root} has uncommitted changes "
            f"({len(base_dirty)} file(s)); commit or stash them first"
        )
    return base_branch


def merge(repo_root: Path, path: Path, branch: str, base_branch: str | None) -> dict[str, Any]:
    """Merge the session branch into its base branch in the main checkout, only when clean."""
    base_branch = merge_preflight(repo_root, branch, base_branch)
    if path.is_dir():
        pending = dirty_files(path)
        if pending:
            raise EccError(
                f"the session worktree has uncommitted changes ({len(pending)} file(s)); "
                "commit them in the worktree first"
            )
    check = mergeability(repo_root, branch, base_branch)
    if not check.clean:
        raise EccError(
            f"merging {branch} into {base_branch} would conflict in: " + ", ".join(check.conflicts)
        )
    before = git(repo_root, "rev-parse", "HEAD").stdout.strip()
    git(repo_root, "merge", "--no-edit", "-q", branch)
    after = git(repo_root, "rev-parse", "HEAD").stdout.strip()
    return {
        "branch": branch,
        "base": base_branch,
        "before": before,
        "after": after,
        "already_up_to_date": before == after,
    }


@dataclass
class RemoveResult:
    worktree_removed: bool = False
    branch_deleted: bool = False
    kept_reason: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def remove(
    repo_root: Path, path: Path, branch: str, base: str | None, *, discard: bool = False
) -> RemoveResult:
    """Remove a finished session's worktree if clean; delete its branch only if merged.

    ``discard`` (a group's members not picked) removes both whatever they hold."""
    result = RemoveResult()
    if path.is_dir():
        pending = dirty_files(path)
        if pending and not discard:
            result.kept_reason = f"worktree has uncommitted changes ({len(pending)} file(s))"
            return result
        with _worktrees_lock(repo_root):
            force = ["--force"] if discard else []
            outcome = git(repo_root, "worktree", "remove", *force, str(path), check=False)
            if outcome.returncode != 0 and path.is_dir():
                shutil.rmtree(path)
            git(repo_root, "worktree", "prune", check=False)
    result.worktree_removed = True
    if branch_exists(repo_root, branch):
        if discard or (base and is_merged(repo_root, branch, base)):
            # -D: is_merged() just proved the base holds every commit, or the caller discards it
            deleted = git(repo_root, "branch", "-D", branch, check=False)
            result.branch_deleted = deleted.returncode == 0
        else:
            result.kept_reason = f"branch {branch} has commits not merged into {base or 'base'}"
    return result


def _worktrees_lock(repo_root: Path) -> FileLock:
    """One repository's worktree list changes one at a time: ``git worktree add`` reads every
    other worktree's entry, and fails ("failed to read .git/worktrees/ID/commondir") on one
    that a concurrent ``add`` has only half made."""
    from ecc.runtime import paths

    return FileLock(paths.state_dir() / "locks" / f"worktrees-{repo_key(repo_root)}.lock")


class FileLock:
    """An exclusive ``flock`` on ``file`` (created 0600), held for a ``with`` block."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.fd = -1

    def __enter__(self) -> FileLock:
        import fcntl
        import os

        private_parent(self.file)
        self.fd = os.open(self.file, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        import os

        os.close(self.fd)
