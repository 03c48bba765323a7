"""Crash detection without a daemon: reads judge this host's runners by pid identity.

Real runners killed by real SIGKILLs; the reads are the real ``ecc sessions`` / ``ecc status``
commands and the dashboard's watcher (the remote API has its own test in tests/remote).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ecc.runtime.config.model import get_config
from ecc.sessions import manager, procs
from ecc.sessions.liveness import refresh_liveness
from ecc.store.base import Store
from ecc.store.models import State, iso_from_epoch
from tests.conftest import run_ecc
from tests.sessions.conftest import start, store_target, wait_state, wait_until, write_config


def _kill_runner(store: Store, sid: str) -> int:
    """SIGKILL the session's runner; return once its harness has ended too (the supervisor
    got the runner's death signal), so the next read can record everything at once."""
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) >= 1, what="first line")
    pid = session.runner_pid
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not procs.alive(pid, session.runner_token), what="the runner's death")
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 10, "the harness to end")
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

    def failed() -> bool:
        watcher.poll()  # once it has the running row, it judges that row's runner
        return watcher.sessions[session.id].state == State.FAILED

    wait_until(failed, 10, "the dashboard to show the session failed")
    reason = watcher.sessions[session.id].reason
    assert f"runner process {pid} died" in reason and "(killed by SIGKILL)" in reason


def test_a_harness_outliving_its_runner_is_failed_once_it_ends_with_all_its_output(
    tmp_path: Path, store: Store
) -> None:
    # the supervisor's SIGKILL comes 8 s after the runner's death: time enough for the read
    # below to find the harness still running on a loaded machine (2 s was not, under xdist)
    write_config(Path.home(), stop_grace_secs=8)
    task = "trap '' TERM HUP; echo ready; sleep 0.5; echo after the runner; sleep 1000"
    sid = start(task, tmp_path, "--no-worktree")
    session = wait_state(store, sid, "running")
    wait_until(lambda: store.count_output(sid) >= 1, what="first line")
    os.kill(session.runner_pid, signal.SIGKILL)  # type: ignore[arg-type]
    wait_until(lambda: not procs.alive(session.runner_pid), what="the runner's death")
    assert run_ecc("status", sid).returncode == 0  # its harness still runs (and writes)
    assert store.get_session(sid).state == State.RUNNING  # type: ignore[union-attr]
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 40, "the supervisor's SIGKILL")
    result = run_ecc("sessions", "--all", "--json")
    assert result.returncode == 0, result.stderr
    final = store.get_session(sid)
    assert final is not None and final.state == State.FAILED
    assert f"runner process {session.runner_pid} died" in final.reason
    assert [r["line"] for r in store.read_output(sid)] == ["ready", "after the runner"]


def test_a_runner_that_recorded_its_end_meanwhile_is_left_alone(store: Store) -> None:
    _running_row(store, "racy0001", procs.hostname())
    seen = store.get_session("racy0001")  # what a read saw while the session was running
    assert seen is not None
    store.transition("racy0001", State.COMPLETED, "harness exited with code 0")  # then it ended
    assert refresh_liveness(store, [seen], get_config()) == []
    final = store.get_session("racy0001")
    assert final is not None and final.state == State.COMPLETED
    assert [e["to_state"] for e in store.list_events("racy0001")][-1] == "completed"


def _leftover_group(store: Store, sid: str, silent_secs: float) -> subprocess.Popen[bytes]:
    """A dead runner's session whose harness group (led by a real process) is still there."""
    _running_row(store, sid, procs.hostname())
    leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
    store.update_session(
        sid,
        harness_pid=leader.pid,
        harness_pgid=leader.pid,
        harness_token=procs.token(leader.pid),
        heartbeat_at=iso_from_epoch(time.time() - silent_secs),
    )
    return leader


def test_a_dead_runners_harness_is_asked_to_end_and_the_session_recorded_once_it_has(
    store: Store,
) -> None:
    leader = _leftover_group(store, "left0001", silent_secs=1)
    assert refresh_liveness(store, None, get_config()) == []  # still running: asked to end
    assert store.get_session("left0001").state == State.RUNNING  # type: ignore[union-attr]
    assert leader.wait(timeout=10) == -signal.SIGTERM  # one SIGTERM, through its leader
    actions = refresh_liveness(store, None, get_config())
    assert [(a["id"], a["action"]) for a in actions] == [("left0001", "failed")]
    assert "outlived" not in actions[0]["reason"]


def test_a_harness_outliving_the_grace_long_after_is_killed_and_recorded(store: Store) -> None:
    leader = _leftover_group(store, "left0002", silent_secs=get_config().stop_grace_secs + 60)
    actions = refresh_liveness(store, None, get_config())
    assert [a["id"] for a in actions] == ["left0002"]
    assert "outlived the grace: SIGKILL" in actions[0]["reason"]
    assert leader.wait(timeout=10) == -signal.SIGKILL


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


def _parent_and_child(store: Store, child: str, *, dead_runner: bool = True) -> str:
    """A parent session row and ``child``, its delegated session: running with a dead runner,
    or (``dead_runner=False``) queued and never claimed."""
    for sid, state in (("parent01", State.COMPLETED), (child, State.QUEUED)):
        store.insert_session(
            sid,
            task="delegate",
            harness="shell",
            state=state,
            reason="created",
            project_dir="/tmp",
            working_dir="/tmp",
            executor="local",
            parent_id=None if sid == "parent01" else "parent01",
        )
    if dead_runner:
        pid, token = _dead_process()
        assert store.claim_runner(child, pid, procs.hostname(), token)
        store.transition(child, State.RUNNING, "harness started")
    return "parent01"


def test_a_child_failed_by_a_read_tells_its_parent(store: Store) -> None:
    """Only the runner used to post a child's result: a child whose runner died left its
    parent waiting for mail that never came."""
    parent = _parent_and_child(store, "child001")
    assert [a["id"] for a in refresh_liveness(store, None, get_config())] == ["child001"]
    [message] = store.inbox(parent)
    assert message["kind"] == "child_result" and message["sender_id"] == "child001"
    assert "child001 (shell) failed without a final answer (runner process" in message["text"]
    assert message["data"]["state"] == "failed"
    assert refresh_liveness(store, None, get_config()) == []
    assert len(store.inbox(parent)) == 1  # told once


def test_a_child_stopped_without_its_runner_tells_its_parent(store: Store) -> None:
    parent = _parent_and_child(store, "child002", dead_runner=False)
    child = store.get_session("child002")
    assert child is not None
    stopped = manager.stop(store, child, get_config())
    assert stopped.state == State.STOPPED
    [message] = store.inbox(parent)
    assert message["kind"] == "child_result" and message["data"]["state"] == "stopped"


STORING_RUNNER = """
import os, signal, sys, time
from ecc.store.models import State
from ecc.store.open import open_store

target, sid, storing = os.environ["STORE_TARGET"], sys.argv[1], float(sys.argv[2])
asked = []
signal.signal(signal.SIGTERM, lambda *_: asked.append(True))
print("ready", flush=True)
while not asked:
    time.sleep(0.01)
time.sleep(storing)  # its harness is gone; it stores what the harness printed before the stop
with open_store(target) as store:
    store.transition(sid, State.STOPPED, "stopped on request, recorded by its runner")
"""


@pytest.mark.parametrize("harness_started", [True, False])
def test_a_stop_waits_for_a_runner_still_storing_after_its_harness_ended(
    store: Store, harness_started: bool
) -> None:
    """``ecc stop`` waits the grace and 10 s for the runner to record the stop. A runner that has
    ended its harness but is still storing the output printed before the stop (a flood's
    backlog on a loaded store) is waited for: its record ends the session. Before, ecc stop
    recorded the stop itself at that deadline (CI saw it at 11 s under a flood on PostgreSQL),
    and the runner's record was refused ("not applied"). A runner that never started its
    harness has nothing to store: at the deadline ecc stop records the stop, as before."""
    store.insert_session(
        "storing1", task="t", harness="shell", state=State.QUEUED, reason="created",
        project_dir="/tmp", working_dir="/tmp", executor="local",
    )  # fmt: skip
    runner = subprocess.Popen(
        [sys.executable, "-c", STORING_RUNNER, "storing1", "2.5"],
        env={**os.environ, "STORE_TARGET": str(store_target())},  # a URL is no argument
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert runner.stdout is not None and runner.stdout.readline() == "ready\n"
        assert store.claim_runner("storing1", runner.pid, procs.hostname(), procs.token(runner.pid))
        if harness_started:
            harness_group, _ = _dead_process()  # the harness and its group have ended
            store.transition(
                "storing1", State.RUNNING, "harness started", harness_pid=harness_group,
                harness_pgid=harness_group,
            )  # fmt: skip
        session = store.get_session("storing1")
        assert session is not None
        stopped = manager.stop(store, session, get_config(), grace=0, wait=0.5)
        assert stopped.state == State.STOPPED
        if harness_started:
            assert stopped.reason == "stopped on request, recorded by its runner"
            assert runner.wait(timeout=30) == 0  # its record was applied, not refused
        else:
            assert stopped.reason == "stopped on request"  # ecc stop's own, at the deadline
    finally:
        runner.kill()
        runner.wait()
