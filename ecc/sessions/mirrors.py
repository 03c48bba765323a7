"""A pool worker's mirrors: the checkouts of sessions that run away from the user's repository.

A worker keeps one bare mirror per repository URL under ``<data dir>/mirrors`` (``git clone
--bare`` once, ``git fetch`` before each session into ``refs/remotes/origin/*``, so the local
``ecc/<id>`` branches of running sessions are never touched by a fetch). A session's worktree
is added from the mirror at the exact base commit named in the request; at the end the branch
is pushed to the repository's URL and the local worktree dropped. Git operations on one mirror
are serialised by a file lock (several sessions of one worker share it). The submitting
checkout fetches the pushed branch back (:func:`fetch_session_branch`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ecc.contract.errors import EccError
from ecc.sessions.worktrees import (
    FileLock,
    branch_exists,
    branch_name,
    dirty_files,
    git,
    private_parent,
    worktree_root,
)

if TYPE_CHECKING:
    from ecc.contract.types import Config


def mirror_root() -> Path:
    from ecc.runtime import paths

    return paths.data_dir() / "mirrors"


def _mirror_lock(mirror: Path) -> FileLock:
    return FileLock(mirror.with_name(mirror.name + ".lock"))


def mirror_path(url: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", url.rstrip("/").rsplit("/", 1)[-1]).strip("-")[:40]
    from ecc.runtime.paths import sha256_hex

    digest = sha256_hex(url)[:10]
    return mirror_root() / f"{slug or 'repo'}-{digest}.git"


def ensure_mirror(url: str) -> Path:
    """This worker's bare mirror of ``url``, fetched now. Call with the mirror lock held."""
    mirror = mirror_path(url)
    if not (mirror / "HEAD").exists():
        if mirror.exists():
            shutil.rmtree(mirror)
        private_parent(mirror)
        git(mirror.parent, "clone", "--bare", "--quiet", url, str(mirror))
        git(mirror, "config", "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    git(mirror, "fetch", "--quiet", "--prune", "origin")
    return mirror


def checkout_from_mirror(
    url: str, session_id: str, base_commit: str, config: Config
) -> tuple[Path, str]:
    """Add the session's worktree from this worker's mirror: at ``base_commit`` on a new branch,
    or at the session's own branch when the remote already has it (a resumed session)."""
    branch = branch_name(session_id, config)
    with _mirror_lock(mirror_path(url)):
        mirror = ensure_mirror(url)
        path = worktree_root(config) / mirror.name.removesuffix(".git") / session_id
        private_parent(path, config)
        if path.exists():
            git(mirror, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
        git(mirror, "worktree", "prune")
        pushed = f"refs/remotes/origin/{branch}"
        if not git(mirror, "rev-parse", "--verify", "-q", pushed, check=False).returncode:
            start = pushed
        elif git(mirror, "cat-file", "-e", f"{base_commit}^{{commit}}", check=False).returncode:
            raise EccError(
                f"base commit {base_commit[:12]} is not on the remote {url}; push it first"
            )
        else:
            start = base_commit
        git(mirror, "worktree", "add", "-q", "-B", branch, str(path), start)
    return path, branch


def _identity_args(path: Path) -> list[str]:
    if git(path, "config", "user.email", check=False).returncode == 0:
        return []
    return ["-c", "user.name=ecc", "-c", "user.email=ecc@localhost"]


def publish(path: Path, url: str, branch: str) -> str:
    """Commit leftover changes in the worktree, push ``branch`` to ``url``; a one-line report."""
    committed = ""
    if dirty_files(path):
        git(path, "add", "--all")
        git(path, *_identity_args(path), "commit", "-q", "-m", f"ecc: uncommitted work of {branch}")
        committed = "uncommitted changes committed; "
    head = git(path, "rev-parse", "HEAD").stdout.strip()
    git(path, "push", "--quiet", url, f"HEAD:refs/heads/{branch}")
    return f"{committed}branch {branch} ({head[:12]}) pushed to {url}"


def drop_checkout(path: Path, branch: str) -> None:
    """Remove a worker's worktree and its local branch (the pushed branch is the record)."""
    common = git(path, "rev-parse", "--git-common-dir").stdout.strip()
    mirror = (path / common).resolve() if not Path(common).is_absolute() else Path(common)
    with _mirror_lock(mirror):
        git(mirror, "worktree", "remove", "--force", str(path), check=False)
        shutil.rmtree(path, ignore_errors=True)
        git(mirror, "worktree", "prune", check=False)
        git(mirror, "branch", "-D", branch, check=False)


def fetch_session_branch(repo_root: Path, url: str, branch: str) -> bool:
    """Bring a worker-pushed session branch into the submitting checkout (False if absent)."""
    current = git(repo_root, "symbolic-ref", "-q", "--short", "HEAD", check=False).stdout.strip()
    if current == branch:
        return branch_exists(repo_root, branch)
    result = git(
        repo_root, "fetch", "--quiet", url, f"+refs/heads/{branch}:refs/heads/{branch}", check=False
    )
    return result.returncode == 0
