"""Refusals (clear error, exit 1, nothing written) and the worktree commands."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ecc.store.base import Store
from ecc.store.models import State
from tests.conftest import git, run_ecc
from tests.sessions.conftest import start, wait_state


def _sessions(store: Store) -> int:
    return len(store.list_sessions())


def test_unknown_harness(git_repo: Path, store: Store) -> None:
    result = run_ecc("run", "--harness", "nope", "echo", cwd=git_repo)
    assert result.returncode == 1
    assert "Error: unknown harness 'nope'" in result.stderr and "shell" in result.stderr
    assert _sessions(store) == 0


def test_empty_task(git_repo: Path, store: Store) -> None:
    result = run_ecc("start", "   ", cwd=git_repo)
    assert result.returncode == 1 and "task must not be empty" in result.stderr
    assert _sessions(store) == 0


def test_not_a_git_repo(tmp_path: Path, store: Store) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    result = run_ecc("start", "echo hi", cwd=plain)
    assert result.returncode == 1 and "not inside a git repository" in result.stderr
    assert "--no-worktree" in result.stderr
    assert _sessions(store) == 0
    ok = run_ecc("run", "--no-worktree", "echo hi", cwd=plain)
    assert ok.returncode == 0 and ok.stdout.strip() == "hi"


def test_unknown_session_and_ambiguous_prefix(store: Store) -> None:
    for sid in ("abcd11112222", "abcd33334444"):
        store.insert_session(
            sid,
            task=f"task {sid}",
            harness="shell",
            state=State.PENDING,
            reason="created",
            project_dir="/tmp",
            working_dir="/tmp",
        )
        store.transition(sid, State.STOPPED, "test")
    missing = run_ecc("status", "ffff0000")
    assert missing.returncode == 1 and "no session matches 'ffff0000'" in missing.stderr
    ambiguous = run_ecc("logs", "abcd")
    assert ambiguous.returncode == 1
    assert "ambiguous" in ambiguous.stderr
    assert "abcd11112222" in ambiguous.stderr and "abcd33334444" in ambiguous.stderr
    short = run_ecc("status", "ab")
    assert short.returncode == 1 and "too short" in short.stderr
    unique = json.loads(run_ecc("status", "abcd1", "--json").stdout)
    assert unique["id"] == "abcd11112222"
    latest = json.loads(run_ecc("status", "--json").stdout)
    assert latest["id"] == "abcd33334444"  # most recently created


def test_bad_state_filter_and_resume_of_completed(tmp_path: Path, store: Store) -> None:
    assert run_ecc("sessions", "--state", "bogus").returncode == 1
    sid = start("echo run >> runs.txt", tmp_path, "--no-worktree")
    wait_state(store, sid, "completed")
    result = run_ecc("resume", sid)  # a completed session continues (shell: runs again)
    assert result.returncode == 0, result.stderr
    wait_state(store, sid, "completed")
    assert (tmp_path / "runs.txt").read_text() == "run\nrun\n"
    reasons = [e["reason"] for e in store.list_events(sid)]
    assert "resumed on request" in reasons
    listed = json.loads(run_ecc("sessions", "--state", "completed", "--json").stdout)
    assert [s["id"] for s in listed] == [sid]
    assert json.loads(run_ecc("sessions", "--json").stdout) == []  # active only by default


def _finished_session(repo: Path, store: Store, task: str) -> str:
    result = run_ecc("run", task, cwd=repo)
    assert result.returncode == 0, result.stderr
    return store.latest_session().id  # type: ignore[union-attr]


def test_worktree_status_diff_merge_and_prune(git_repo: Path, store: Store) -> None:
    sid = _finished_session(
        git_repo, store, "echo new > feature.txt && git add feature.txt && git commit -qm feat"
    )
    status = json.loads(run_ecc("worktree", "status", sid, "--json").stdout)
    assert (status["ahead"], status["behind"], status["dirty"]) == (1, 0, [])
    assert status["mergeable"]["clean"] is True
    diff = run_ecc("worktree", "diff", sid)
    assert "+new" in diff.stdout and "feature.txt" in diff.stdout
    listed = json.loads(run_ecc("worktree", "list", "--json").stdout)
    assert [row["id"] for row in listed] == [sid]
    merged = run_ecc("worktree", "merge", sid)
    assert merged.returncode == 0, merged.stderr
    assert (git_repo / "feature.txt").read_text() == "new\n"
    pruned = json.loads(run_ecc("worktree", "prune", "--merged", "--json").stdout)
    assert pruned == [
        {"id": sid, "worktree_removed": True, "branch_deleted": True, "kept_reason": ""}
    ]
    assert not git(git_repo, "branch", "--list", f"ecc/{sid}").strip()


def test_merge_refuses_dirty_base(git_repo: Path, store: Store) -> None:
    sid = _finished_session(git_repo, store, "echo x > x.txt && git add x.txt && git commit -qm x")
    (git_repo / "README.md").write_text("local edit\n")
    head = git(git_repo, "rev-parse", "HEAD")
    result = run_ecc("worktree", "merge", sid)
    assert result.returncode == 1 and "uncommitted changes" in result.stderr
    assert git(git_repo, "rev-parse", "HEAD") == head
    assert (git_repo / "README.md").read_text() == "local edit\n"
    assert not (git_repo / "x.txt").exists()


def test_merge_refuses_conflicts_and_changes_nothing(git_repo: Path, store: Store) -> None:
    sid = _finished_session(git_repo, store, "echo theirs > README.md && git commit -qam theirs")
    (git_repo / "README.md").write_text("ours\n")
    git(git_repo, "commit", "-qam", "ours")
    head = git(git_repo, "rev-parse", "HEAD")
    status = json.loads(run_ecc("worktree", "status", sid, "--json").stdout)
    assert status["mergeable"] == {"clean": False, "conflicts": ["README.md"], "base": "main"}
    result = run_ecc("worktree", "merge", sid)
    assert result.returncode == 1 and "conflict in: README.md" in result.stderr
    assert git(git_repo, "rev-parse", "HEAD") == head
    assert git(git_repo, "status", "--porcelain") == ""


def test_prune_never_deletes_unmerged_or_dirty_work(git_repo: Path, store: Store) -> None:
    committed = _finished_session(
        git_repo, store, "echo c > c.txt && git add c.txt && git commit -qm c"
    )
    dirty = _finished_session(git_repo, store, "echo d > d.txt")
    results = {
        r["id"]: r for r in json.loads(run_ecc("worktree", "prune", "--finished", "--json").stdout)
    }
    assert results[committed]["worktree_removed"] and not results[committed]["branch_deleted"]
    assert "not merged" in results[committed]["kept_reason"]
    assert git(git_repo, "log", "--format=%s", f"ecc/{committed}").splitlines()[0] == "c"
    assert not results[dirty]["worktree_removed"]
    assert (Path(store.get_session(dirty).worktree_path) / "d.txt").exists()  # type: ignore[arg-type]
    # resume restores a pruned worktree from its branch
    session = store.get_session(committed)
    assert session is not None and not Path(session.worktree_path).exists()  # type: ignore[arg-type]


def test_stop_of_finished_session_is_an_error(tmp_path: Path, store: Store) -> None:
    sid = start("true", tmp_path, "--no-worktree")
    wait_state(store, sid, "completed")
    result = run_ecc("stop", sid)
    assert result.returncode == 1 and "already completed" in result.stderr


def _repo_info_three_calls(path: Path) -> tuple[str, str, str | None] | str:
    """What repo_info answered with three git processes (the reference for the one-call form)."""
    top = subprocess.run(
        ["git", "rev-parse", "--show-toplevel"], cwd=path, capture_output=True, text=True
    )
    if top.returncode:
        return "not a repository"
    root = top.stdout.strip()
    head = subprocess.run(
        ["git", "rev-parse", "--verify", "-q", "HEAD^{commit}"],
        cwd=root,
        capture_output=True,
        text=True,
    )
    if head.returncode:
        return "no commits"
    branch = subprocess.run(
        ["git", "symbolic-ref", "-q", "--short", "HEAD"], cwd=root, capture_output=True, text=True
    ).stdout.strip()
    return root, head.stdout.strip(), branch or None


def test_repo_info_answers_as_the_three_git_calls_did(tmp_path: Path, git_repo: Path) -> None:
    from ecc.contract.errors import EccError
    from ecc.sessions import worktrees

    def one_call(path: Path) -> tuple[str, str, str | None] | str:
        try:
            info = worktrees.repo_info(path)
        except EccError as exc:
            return "no commits" if "no commits yet" in exc.message else "not a repository"
        return str(info.root), info.head_commit, info.head_branch

    (git_repo / "sub" / "deeper").mkdir(parents=True)
    empty = tmp_path / "empty"
    git(tmp_path, "init", "-q", "-b", "trunk", str(empty))
    outside = tmp_path / "plain"
    outside.mkdir()
    linked = tmp_path / "linked"
    git(git_repo, "worktree", "add", "-q", "-b", "side", str(linked))
    cases: list[Path] = [git_repo, git_repo / "sub" / "deeper", empty, outside, linked]
    for path in cases:
        assert one_call(path) == _repo_info_three_calls(path), path
    git(git_repo, "tag", "main")  # a tag named like the branch: both say heads/main
    assert one_call(git_repo) == _repo_info_three_calls(git_repo)
    git(git_repo, "checkout", "-q", "--detach")
    detached = one_call(git_repo)
    assert detached == _repo_info_three_calls(git_repo) and detached[2] is None  # type: ignore[index]
    with pytest.raises(EccError, match="is not inside a git repository"):
        worktrees.repo_info(outside)
    with pytest.raises(EccError, match="has no commits yet"):
        worktrees.repo_info(empty)


def test_an_adapter_refusal_fails_the_session_with_its_reason_alone(
    git_repo: Path, store: Store
) -> None:
    """A refusal is the user's to fix: the session's reason is the adapter's sentence, not a
    "runner error", and the runner's log has no traceback for it."""
    from ecc.runtime import paths
    from tests.sessions.conftest import write_config

    write_config(Path.home(), agent_profiles={"ro": {"disallowed_tools": ["Bash"]}})
    session_id = start("task", git_repo, "--harness", "codex", "--profile", "ro")
    failed = wait_state(store, session_id, "failed")
    assert failed.reason.startswith("harness codex refused profile fields (disallowed_tools:")
    log = paths.state_dir() / "logs" / f"{session_id}.runner.log"
    assert "Traceback" not in (log.read_text() if log.exists() else "")


def test_concurrent_worktree_adds_of_one_repository_all_succeed(git_repo: Path) -> None:
    """``git worktree add`` reads every other worktree's entry and fails on one a concurrent
    add has only half made: ecc serialises a repository's worktree changes."""
    import sys

    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from ecc.runtime.config import view\n"
        "from ecc.sessions import worktrees\n"
        "head = worktrees.git(Path(sys.argv[1]), 'rev-parse', 'HEAD').stdout.strip()\n"
        "worktrees.create(Path(sys.argv[1]), sys.argv[2], head, view.view())\n"
    )
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(git_repo), f"c{n:011d}"],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(16)
    ]
    failures = [p.communicate(timeout=120)[1] for p in procs if p.wait(timeout=120) != 0]
    assert failures == []
    listed = git(git_repo, "worktree", "list")
    assert len(listed.splitlines()) == 17
