"""Sessions end to end through the real CLI: runner, worktree, capture, stop, daemon."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from ecc.sessions import procs
from ecc.store.base import Store
from tests.conftest import ECC, git, run_ecc
from tests.sessions.conftest import start, wait_state, wait_until, write_config


def test_shell_session_end_to_end(git_repo: Path, store: Store) -> None:
    task = (
        "printf 'one\\ntwo\\n'; echo oops >&2; git rev-parse --abbrev-ref HEAD; "
        'echo "$ECC_SESSION_ID $ECC_HARNESS"; echo "$ECC_PROJECT_DIR"'
    )
    result = run_ecc("run", "--harness", "shell", task, cwd=git_repo)
    assert result.returncode == 0, result.stderr
    session = store.latest_session()
    assert session is not None
    assert session.state.value == "completed" and session.exit_code == 0
    assert session.worktree_branch == f"ecc/{session.id}"
    assert Path(session.worktree_path).is_dir()  # type: ignore[arg-type]
    assert git(git_repo, "branch", "--list", f"ecc/{session.id}").strip()
    lines = [(r["stream"], r["line"]) for r in store.read_output(session.id)]
    stdout = [line for stream, line in lines if stream == "stdout"]
    assert stdout == ["one", "two", f"ecc/{session.id}", f"{session.id} shell", str(git_repo)]
    assert [line for stream, line in lines if stream == "stderr"] == ["oops"]
    assert [r["seq"] for r in store.read_output(session.id)] == list(range(1, 7))
    assert "one\ntwo\n" in result.stdout and "oops" in result.stderr
    logs = json.loads(run_ecc("logs", session.id, "--json").stdout)
    assert [row["line"] for row in logs if row["stream"] == "stdout"] == stdout
    assert not (git_repo / ".ecc").exists()  # nothing written into the user's repository


def test_failing_command_ends_failed_with_its_code(git_repo: Path, store: Store) -> None:
    result = run_ecc("run", "--harness", "shell", "echo bye; exit 7", cwd=git_repo)
    assert result.returncode == 7
    session = store.latest_session()
    assert session is not None
    assert (session.state.value, session.exit_code) == ("failed", 7)
    assert "code 7" in session.reason
    status = json.loads(run_ecc("status", "latest", "--json").stdout)
    assert status["events"][-1]["to_state"] == "failed"


def test_output_decoding_crlf_and_long_lines(tmp_path: Path, store: Store) -> None:
    task = "printf 'a\\r\\n\\377b\\n'; head -c 200000 /dev/zero | tr '\\000' y; printf '\\nend'"
    result = run_ecc("run", "--no-worktree", task, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    lines = [r["line"] for r in store.read_output(store.latest_session().id)]  # type: ignore[union-attr]
    assert lines[0] == "a" and lines[1] == "\ufffdb"
    assert lines[2].startswith("yyyy") and lines[2].endswith("[line truncated]")
    assert len(lines[2]) < 70_000
    assert lines[3] == "end"  # a last line without a newline is kept


def test_logs_follow_a_live_session(tmp_path: Path, store: Store) -> None:
    sid = start(
        "echo one; while [ ! -f go ]; do sleep 0.05; done; echo two", tmp_path, "--no-worktree"
    )
    follower = subprocess.Popen([*ECC, "logs", "-f", sid], stdout=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        assert follower.stdout.readline().strip() == "one"
        (tmp_path / "go").touch()
        rest, _ = follower.communicate(timeout=30)
    finally:
        if follower.poll() is None:
            follower.kill()
    assert rest.strip() == "two"
    assert follower.returncode == 0
    assert store.get_session(sid).state.value == "completed"  # type: ignore[union-attr]


def test_stop_kills_sigterm_ignoring_group_and_keeps_worktree(
    git_repo: Path, store: Store, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    task = (
        "echo work > work.txt && git add work.txt && git commit -qm work && "
        f"trap '' TERM; sleep 1000 & echo $! > {pids}; echo $$ >> {pids}; echo ready; wait"
    )
    sid = start(task, git_repo, "--harness", "shell")
    wait_until(lambda: any(r["line"] == "ready" for r in store.read_output(sid)), what="ready")
    children = [int(p) for p in pids.read_text().split()]
    assert all(procs.alive(p) for p in children)
    result = run_ecc("stop", sid, "--grace", "0.3", "--json")
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["state"] == "stopped" and "SIGKILL" in final["reason"]
    wait_until(lambda: not any(procs.alive(p) for p in children), 10, "children to die")
    session = store.get_session(sid)
    assert session is not None and Path(session.worktree_path).is_dir()  # type: ignore[arg-type]
    log = git(git_repo, "log", "--format=%s", f"ecc/{sid}")
    assert log.splitlines()[0] == "work"


def test_daemon_fails_session_whose_runner_was_killed(git_repo: Path, store: Store) -> None:
    sid = start("echo ready; sleep 1000", git_repo, "--harness", "shell")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) == 1, what="first line")
    os.kill(session.runner_pid, signal.SIGKILL)
    wait_until(lambda: not procs.alive(session.runner_pid, session.runner_token), what="death")
    result = run_ecc("daemon", "--once", "--json")
    assert result.returncode == 0, result.stderr
    final = store.get_session(sid)
    assert final is not None and final.state.value == "failed"
    assert f"runner process {session.runner_pid} died" in final.reason
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 10, "harness group to end")


def test_queued_session_starts_when_a_slot_frees(git_repo: Path, store: Store) -> None:
    write_config(Path.home(), max_parallel_worktrees=1)
    first = start("while [ ! -f ../go ]; do sleep 0.05; done", git_repo)
    wait_state(store, first, "running")
    second = start("echo second ran", git_repo)
    queued = wait_state(store, second, "queued")
    assert "max_parallel_worktrees=1" in queued.reason
    assert store.get_session(first).state.value == "running"  # type: ignore[union-attr]
    session = store.get_session(first)
    (Path(session.worktree_path).parent / "go").touch()  # type: ignore[arg-type]
    wait_state(store, first, "completed")
    done = wait_state(store, second, "completed")
    assert [r["line"] for r in store.read_output(second)] == ["second ran"]
    moves = [e["to_state"] for e in store.list_events(second) if e["kind"] == "transition"]
    assert moves == ["pending", "queued", "running", "completed"]
    assert done.worktree_path and Path(done.worktree_path).is_dir()


def test_twenty_sessions_never_more_than_four_running(
    git_repo: Path, store: Store, tmp_path: Path
) -> None:
    write_config(Path.home(), max_parallel_worktrees=4)
    marks = tmp_path / "marks"
    marks.mkdir()
    task = (
        f"echo start $(date +%s%N) >> {marks}/$ECC_SESSION_ID; i=0; "
        "while [ $i -lt 300 ]; do echo line $i; i=$((i+1)); done; sleep 0.1; "
        f"echo end $(date +%s%N) >> {marks}/$ECC_SESSION_ID"
    )
    launchers = [
        subprocess.Popen(
            [*ECC, "start", "--json", task], cwd=git_repo, stdout=subprocess.PIPE, text=True
        )
        for _ in range(20)
    ]
    ids = [json.loads(p.communicate(timeout=60)[0])["id"] for p in launchers]
    assert len(set(ids)) == 20
    for sid in ids:
        final = wait_state(store, sid, "completed", "failed", timeout=90)
        assert final.state.value == "completed", (final.reason, store.list_events(sid))
    points = []
    for sid in ids:
        lines = (marks / sid).read_text().split()
        points += [(int(lines[1]), 1), (int(lines[3]), -1)]
        assert [r["line"] for r in store.read_output(sid)] == [f"line {i}" for i in range(300)]
    running = peak = 0
    for _, delta in sorted(points):
        running += delta
        peak = max(peak, running)
    assert 1 <= peak <= 4


def test_resume_reruns_in_the_same_worktree(git_repo: Path, store: Store) -> None:
    task = "n=$(cat count 2>/dev/null || echo 0); echo $((n+1)) > count; cat count; [ $n -ge 1 ]"
    result = run_ecc("run", task, cwd=git_repo)
    assert result.returncode == 1
    sid = store.latest_session().id  # type: ignore[union-attr]
    resumed = run_ecc("resume", sid[:6])
    assert resumed.returncode == 0, resumed.stderr
    final = wait_state(store, sid, "completed", "failed")
    assert final.state.value == "completed"
    assert [r["line"] for r in store.read_output(sid)] == ["1", "2"]
    assert final.run_kind == "resume" and final.attempts == 2


def test_stop_a_queued_session_and_rm(git_repo: Path, store: Store) -> None:
    write_config(Path.home(), max_parallel_worktrees=1)
    first = start("while [ ! -f ../go ]; do sleep 0.05; done", git_repo)
    wait_state(store, first, "running")
    second = start("echo never", git_repo)
    wait_state(store, second, "queued")
    assert run_ecc("rm", second).returncode == 1  # refuses a live one
    result = run_ecc("stop", second, "--json")
    assert json.loads(result.stdout)["state"] == "stopped"
    assert run_ecc("stop", first, "--grace", "0.2").returncode == 0
    removed = run_ecc("rm", second, "--json")
    assert removed.returncode == 0, removed.stderr
    assert store.get_session(second) is None
    assert store.count_output(second) == 0


def test_runner_refuses_a_second_claim(tmp_path: Path, store: Store) -> None:
    sid = start("echo once", tmp_path, "--no-worktree")
    wait_state(store, sid, "completed")
    again = subprocess.run(
        [*ECC, "run-session", "--session-id", sid], capture_output=True, text=True, timeout=30
    )
    assert again.returncode == 0
    assert store.count_output(sid) == 1
    assert store.list_events(sid)[-1]["kind"] == "runner_refused"


def test_daemon_lock_refuses_a_second_daemon(store: Store) -> None:
    lock = store.daemon_lock()
    lock.acquire()
    try:
        result = run_ecc("daemon", "--once")
    finally:
        lock.release()
    assert result.returncode == 1
    assert f"already running on this store (pid {os.getpid()})" in result.stderr
    assert run_ecc("daemon", "--once").returncode == 0


def test_daemon_stops_cleanly_on_sigterm(tmp_path: Path) -> None:
    daemon = subprocess.Popen(
        [*ECC, "daemon", "--interval", "0.1"], stderr=subprocess.PIPE, text=True
    )
    try:
        assert daemon.stderr is not None
        wait_until(lambda: "daemon started" in daemon.stderr.readline(), what="daemon start")
        daemon.send_signal(signal.SIGTERM)
        _, err = daemon.communicate(timeout=30)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert daemon.returncode == 0
    assert "daemon stopped" in err
    assert sys.executable  # the daemon released its lock: a new one starts
    assert run_ecc("daemon", "--once").returncode == 0
