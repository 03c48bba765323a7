"""Crash detection without a daemon: reads judge this host's runners by pid identity.

Real runners killed by real SIGKILLs; the reads are the real ``ecc sessions`` / ``ecc status``
commands and the dashboard's watcher (the remote API has its own test in tests/remote).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from ecc.runtime.config.model import get_config
from ecc.sessions import manager, procs
from ecc.sessions.liveness import refresh_liveness
from ecc.store.base import Store
from ecc.store.models import State
from tests.conftest import run_ecc
from tests.sessions.conftest import start, wait_state, wait_until, write_config


def _kill_runner(store: Store, sid: str) -> int:
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) >= 1, what="first line")
    pid = session.runner_pid
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not procs.alive(pid, session.runner_token), what="the runner's death")
    return int(pid)


def _dead_process() -> tuple[int, str]:
    """The pid and identity token of a real process that has exited (and been reaped)."""
    proc = subprocess.Popen(["sleep", "30"])
    token = procs.token(proc.pid)
    assert token is not None
    proc.kill()
    proc.wait()
    return proc.pid, token


def _running_row(store: Store, sid: str, host: str) -> None:
    store.insert_session(
        sid,
        task="t",
        harness="shell",
        state=State.PENDING,
        reason="created",
        project_dir="/tmp",
        working_dir="/tmp",
        executor="local",
    )
    pid, token = _dead_process()
    assert store.claim_runner(sid, pid, host, token)
    store.transition(sid, State.RUNNING, "harness started")


@pytest.mark.parametrize("front", ["sessions", "status"])
def test_a_cli_read_fails_a_killed_runners_session_and_the_queue_moves(
    tmp_path: Path, store: Store, front: str
) -> None:
    write_config(Path.home(), max_parallel_sessions=1)
    first = start("echo ready; sleep 1000", tmp_path, "--no-worktree")
    wait_state(store, first, "running")
    second = start("echo second ran", tmp_path, "--no-worktree")
    wait_state(store, second, "queued")
    pid = _kill_runner(store, first)
    if front == "sessions":
        result = run_ecc("sessions", "--json")
        assert result.returncode == 0, result.stderr
        assert first not in [s["id"] for s in json.loads(result.stdout)]  # no longer active
    else:
        result = run_ecc("status", first, "--json")
        assert result.returncode == 0, result.stderr
        assert json.loads(result.stdout)["state"] == "failed"
    failed = store.get_session(first)
    assert failed is not None and failed.state == State.FAILED
    assert f"runner process {pid} died" in failed.reason
    # no daemon runs: the read handed the freed slot to the queued session
    assert wait_state(store, second, "completed").exit_code == 0
    assert [r["line"] for r in store.read_output(second)] == ["second ran"]
    wait_until(lambda: not procs.group_alive(failed.harness_pgid), 10, "the harness group to end")


def test_the_dashboard_notices_a_dead_runner_and_names_its_signal(
    tmp_path: Path, store: Store
) -> None:
    from ecc.tui import data

    config = get_config()
    request = manager.Request(task="echo ready; sleep 1000", harness="shell", use_worktree=False)
    request.cwd = tmp_path
    session = manager.create(store, request, config)
    manager.submit(store, session, config)  # the runner is this process's child
    watcher = data.SessionWatcher(store)
    watcher.poll()
    pid = _kill_runner(store, session.id)
    watcher.poll()  # sees the session running: judges its runner
    watcher.poll()
    seen = watcher.sessions[session.id]
    assert seen.state == State.FAILED
    assert f"runner process {pid} died" in seen.reason and "SIGKILL" in seen.reason


def test_a_runner_that_recorded_its_end_meanwhile_is_left_alone(store: Store) -> None:
    _running_row(store, "racy0001", procs.hostname())
    seen = store.get_session("racy0001")  # what a read saw while the session was running
    assert seen is not None
    store.transition("racy0001", State.COMPLETED, "harness exited with code 0")  # then it ended
    assert refresh_liveness(store, [seen], get_config()) == []
    final = store.get_session("racy0001")
    assert final is not None and final.state == State.COMPLETED
    assert [e["to_state"] for e in store.list_events("racy0001")][-1] == "completed"


def test_sessions_of_other_hosts_are_left_alone(store: Store) -> None:
    _running_row(store, "remote01", "worker-elsewhere")
    _running_row(store, "local001", procs.hostname())
    actions = refresh_liveness(store, None, get_config())
    assert [a["id"] for a in actions] == ["local001"]
    assert store.get_session("remote01").state == State.RUNNING  # type: ignore[union-attr]
    assert store.get_session("local001").state == State.FAILED  # type: ignore[union-attr]
    assert refresh_liveness(store, None, get_config()) == []  # nothing twice


def test_two_dispatchers_start_a_queued_session_once(tmp_path: Path, store: Store) -> None:
    config = get_config()
    request = manager.Request(task="echo once", harness="shell", use_worktree=False, cwd=tmp_path)
    session = manager.create(store, request, config)
    store.transition(session.id, State.QUEUED, "waiting for a slot")
    store.enqueue(session.id, None)
    # two runners ending at once: the second looks while the first one's runner is starting
    assert manager.dispatch_queued(store, config) == [session.id]
    assert manager.dispatch_queued(store, config) == []
    final = wait_state(store, session.id, "completed")
    assert final.attempts == 1
    assert "runner_refused" not in [e["kind"] for e in store.list_events(session.id)]
