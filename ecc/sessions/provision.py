"""What a new session worktree gets besides the base commit, and what starting a session warns.

A worktree holds the committed tree only. ``[worktree] copy_ignored`` (globs relative to the
repository root) copies files git ignores — ``.env``, local settings — from the checkout into
each new worktree: only untracked ignored files git itself lists for those globs, never a
symbolic link nor a file reached through one, never over a file the worktree has.
``[worktree] setup`` is a shell command run in each new worktree before the agent starts
(``worktree.setup_timeout_secs``); a failure fails the session, since the agent would work in
a half-prepared tree. Both are recorded as session events every time (``worktree_copy``,
``worktree_setup``), and ``ecc run`` prints what they will do the first time they apply to a
repository (remembered per repository and settings in ``<state dir>/worktree-setup``). From a
repository's own ``.ecc/config.toml`` both need ``ecc trust``.

Starting a worktree session also warns, in one line, when the checkout has uncommitted changes:
the worktree starts from the base commit without them.
"""

from __future__ import annotations

import os
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported: ``ecc run -d`` and the runner import this
if TYPE_CHECKING:
    from typing import Any

    from ecc.store.base import Store
    from ecc.store.models import Session

OUTPUT_TAIL_BYTES = 8 * 1024  # what a setup run's event keeps of its output
LISTED = 50  # files named in an event


def settings(config: Any) -> tuple[list[str], str, float]:
    """``(copy_ignored, setup, setup_timeout_secs)`` of ``config`` (a view or the model)."""
    table = getattr(config, "worktree", None)
    if table is None:  # a cached view from before the table existed
        return [], "", 600.0
    globs = [str(pattern) for pattern in getattr(table, "copy_ignored", None) or ()]
    setup = str(getattr(table, "setup", "") or "").strip()
    return globs, setup, float(getattr(table, "setup_timeout_secs", 600.0))


def first_time_notice(cwd: Path, config: Any) -> str | None:
    """The line ``ecc run`` prints before a worktree session of the repository at ``cwd`` gets
    copied files or a set-up command for the first time (or with changed settings); None
    otherwise. Remembered once returned."""
    globs, setup, _ = settings(config)
    if not globs and not setup:
        return None
    from ecc.sessions.worktrees import git, repo_key

    found = git(cwd, "rev-parse", "--show-toplevel", check=False)
    if found.returncode != 0 or not found.stdout.strip():
        return None  # not a repository: creating the session says so
    root = Path(found.stdout.strip())
    import json

    from ecc.runtime import paths

    digest = paths.sha256_hex(json.dumps([str(root), globs, setup]))
    marker = paths.state_dir() / "worktree-setup" / repo_key(root)
    try:
        if marker.read_text(encoding="utf-8").strip() == digest:
            return None
    except OSError:
        pass
    try:
        paths.ensure_private_dir(marker.parent)
        paths.replace_file(marker, (digest + "\n").encode(), private=True)
    except OSError:
        pass  # shown again next time: better than never
    does = []
    if globs:
        does.append("get the ignored files matching " + ", ".join(globs) + " copied in")
    if setup:
        does.append(f"run the set-up command {setup!r}")
    return (
        f"Note: each new session worktree of {root} will " + " and ".join(does)
        + " ([worktree] copy_ignored / setup; shown once, recorded on every session)"
    )  # fmt: skip


def dirty_warning(session: Session) -> str | None:
    """One line when the checkout a worktree session starts from has uncommitted changes."""
    if not session.use_worktree or not session.repo_root:
        return None
    from ecc.sessions.worktrees import git

    result = git(
        session.repo_root, "status", "--porcelain", "--untracked-files=normal", check=False
    )
    count = sum(1 for line in result.stdout.splitlines() if line.strip())
    if result.returncode != 0 or not count:
        return None
    return (
        f"Warning: {count} file(s) in {session.repo_root} have uncommitted changes that are not "
        f"in the session's worktree (it starts from {(session.base_commit or 'HEAD')[:12]}); "
        "commit them first to include them"
    )


# -- in the runner: a new worktree ------------------------------------------------------------


def new_worktree(store: Store, session: Session, repo: Path, path: Path, config: Any) -> None:
    """Give the new worktree ``path`` of ``session`` its copied files and run its set-up.

    Raises :class:`ecc.contract.errors.EccError` when the set-up command fails.
    """
    globs, setup, timeout = settings(config)
    if globs:
        copied, skipped = copy_ignored(repo, path, globs)
        reason = (
            f"{len(copied)} ignored file(s) copied from {repo} (worktree.copy_ignored)"
            if copied or skipped
            else "no ignored file matches worktree.copy_ignored"
        )
        if skipped:
            reason += f", {len(skipped)} skipped"
        data = {
            "patterns": globs,
            "files": copied[:LISTED],
            "skipped": [f"{rel}: {why}" for rel, why in skipped[:LISTED]],
        }
        store.add_event(session.id, "worktree_copy", reason, data)
    if setup:
        env = {
            **os.environ,
            "ECC_SESSION_ID": session.id,
            "ECC_SOURCE_DIR": str(repo),
            "ECC_WORKTREE": str(path),
        }
        code, seconds, tail = run_setup(path, setup, timeout, env)
        if code is None:
            outcome = f"did not finish within {timeout:g} s"
        elif code < 0:
            outcome = f"was killed by signal {-code}"
        else:
            outcome = "succeeded" if code == 0 else f"failed with exit code {code}"
        store.add_event(
            session.id,
            "worktree_setup",
            f"worktree.setup {outcome}" + ("" if code is None else f" after {seconds:.1f} s"),
            {"command": setup, "exit_code": code, "output_tail": tail},
        )
        if code != 0:
            from ecc.contract.errors import EccError

            last = next((ln for ln in reversed(tail.splitlines()) if ln.strip()), "")
            raise EccError(f"worktree.setup {outcome}" + (f": {last.strip()}" if last else ""))


def copy_ignored(
    repo: Path, dest: Path, globs: list[str]
) -> tuple[list[str], list[tuple[str, str]]]:
    """Copy the untracked files git ignores under ``repo`` that match ``globs`` into ``dest``.

    Returns the paths copied and those skipped with why (relative to the repository root).
    """
    from ecc.sessions.worktrees import git

    listed = git(
        repo,
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--",
        *(f":(glob){pattern}" for pattern in globs),
    ).stdout
    source_root = Path(os.path.realpath(repo))
    dest_root = Path(os.path.realpath(dest))
    copied: list[str] = []
    skipped: list[tuple[str, str]] = []
    for rel in sorted({name for name in listed.split("\0") if name}):
        why = _copy_one(source_root, dest_root, rel)
        if why:
            skipped.append((rel, why))
        else:
            copied.append(rel)
    return copied, skipped


def _copy_one(source_root: Path, dest_root: Path, rel: str) -> str:
    """Copy one file; returns why it was skipped, or "" when copied."""
    import stat

    parts = Path(rel).parts
    if not parts or ".." in parts or Path(rel).is_absolute():
        return "not a path inside the repository"
    source = source_root.joinpath(*parts)
    if os.path.realpath(source) != str(source):
        return "a symbolic link, or reached through one"
    try:
        src = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        return exc.strerror or str(exc)
    try:
        info = os.fstat(src)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        parent = _inside(dest_root, parts[:-1])
        if parent is None:
            return "the worktree has a symbolic link or a file on its way"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            out = os.open(parent / parts[-1], flags, stat.S_IMODE(info.st_mode) & 0o777)
        except FileExistsError:
            return "the worktree already has it"
        except OSError as exc:
            return exc.strerror or str(exc)
        with os.fdopen(out, "wb") as target, os.fdopen(os.dup(src), "rb") as origin:
            import shutil

            shutil.copyfileobj(origin, target, 1024 * 1024)
        return ""
    finally:
        os.close(src)


def _inside(root: Path, parts: tuple[str, ...]) -> Path | None:
    """``root/parts…`` as real directories (created as needed), or None when one of them is a
    symbolic link or not a directory: nothing is ever written outside ``root``."""
    import stat

    here = root
    for part in parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            try:
                os.mkdir(here)
            except OSError:
                return None
            continue
        if not stat.S_ISDIR(mode):
            return None
    return here


def run_setup(
    path: Path, command: str, timeout: float, env: dict[str, str]
) -> tuple[int | None, float, str]:
    """Run ``command`` with ``/bin/sh -c`` in ``path``, in a process group of its own ended
    when it exits or times out; returns (exit code or None on timeout, seconds, output tail)."""
    import signal
    import subprocess
    import tempfile
    import time

    started = time.monotonic()
    with tempfile.TemporaryFile() as output:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=path,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        code: int | None
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            code = None
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # what it left behind (or all of it, on timeout)
        except OSError:
            pass
        proc.wait()
        size = output.seek(0, os.SEEK_END)
        output.seek(max(0, size - OUTPUT_TAIL_BYTES))
        tail = output.read().decode("utf-8", errors="replace")
    return code, time.monotonic() - started, tail
