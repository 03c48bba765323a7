"""The lease reaper, the supervisor's group guarantee and the executor seam (both stores)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from ecc.contract.errors import EccError
from ecc.runtime.config.model import get_config
from ecc.sessions import procs
from ecc.sessions.daemon import reap_expired
from ecc.sessions.executor import get_executor
from ecc.store.base import Store
from ecc.store.models import State, iso_from_epoch
from tests.conftest import run_ecc
from tests.sessions.conftest import start, wait_state, wait_until, write_config


def _session(store: Store, sid: str, executor: str, state: State, beat_age: float | None) -> None:
    import time

    store.insert_session(
        sid,
        task="t",
        harness="shell",
        state=State.PENDING,
        reason="created",
        project_dir="/tmp",
        working_dir="/tmp",
        executor=executor,
    )
    if beat_age is not None:
        assert store.claim_runner(sid, 4242, "w9@elsewhere", None)
        store.update_session(sid, heartbeat_at=iso_from_epoch(time.time() - beat_age))
    if state == State.RUNNING:
        store.transition(sid, State.RUNNING, "spawned")


def test_lease_reaper_fails_only_silent_claimed_remote_sessions(store: Store) -> None:
    write_config(Path.home(), lease_seconds=5)
    _session(store, "silent", "celery", State.RUNNING, beat_age=30)
    _session(store, "claimed", "celery", State.PENDING, beat_age=30)  # died while preparing
    _session(store, "fresh", "celery", State.RUNNING, beat_age=1)
    _session(store, "queued", "celery", State.PENDING, beat_age=None)  # still in the broker
    _session(store, "mine", "local", State.RUNNING, beat_age=30)  # judged by pid, not lease
    actions = reap_expired(store, get_config())
    assert sorted(a["id"] for a in actions) == ["claimed", "silent"]
    for sid in ("silent", "claimed"):
        failed = store.get_session(sid)
        assert failed is not None and failed.state == State.FAILED
        assert "lease expired" in failed.reason and "w9@elsewhere" in failed.reason
        assert "not re-run" in failed.reason
        assert store.list_events(sid)[-1]["to_state"] == "failed"
    for sid, state in (("fresh", "running"), ("queued", "pending"), ("mine", "running")):
        assert store.get_session(sid).state.value == state  # type: ignore[union-attr]
    assert reap_expired(store, get_config()) == []  # nothing re-queued, nothing twice


def test_a_heartbeat_that_lands_first_wins_over_the_reaper(store: Store) -> None:
    _session(store, "racy", "celery", State.RUNNING, beat_age=30)
    seen = store.get_session("racy").heartbeat_at  # type: ignore[union-attr]
    store.heartbeat("racy")  # the worker beats between the reaper's read and its write
    assert not store.fail_if_silent("racy", seen, "lease expired")
    assert store.get_session("racy").state == State.RUNNING  # type: ignore[union-attr]


def test_runner_sigkilled_takes_its_process_group_with_it(tmp_path: Path, store: Store) -> None:
    pids = tmp_path / "pids"
    sid = start(f"sleep 1000 & echo $! > {pids}; echo ready; wait", tmp_path, "--no-worktree")
    wait_until(lambda: store.count_output(sid) == 1, what="first line")
    session = wait_state(store, sid, "running")
    assert session.harness_pgid == session.harness_pid  # the supervisor leads the group
    sleeper = int(pids.read_text().split()[0])
    assert os.getpgid(sleeper) == session.harness_pgid
    os.kill(session.runner_pid, signal.SIGKILL)  # type: ignore[arg-type]
    # no daemon, no ecc stop: the kernel's parent-death signal reaches the supervisor
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 10, "the group to end")
    assert not procs.alive(sleeper)


def test_exit_status_and_signals_pass_through_the_supervisor(tmp_path: Path, store: Store) -> None:
    result = run_ecc("run", "--no-worktree", "kill -USR1 $$", cwd=tmp_path)
    session = store.latest_session()
    assert session is not None and session.state == State.FAILED
    assert session.exit_signal == signal.SIGUSR1 and "SIGUSR1" in session.reason
    assert result.returncode == 128 + signal.SIGUSR1
    write_config(Path.home(), harness_runners={"ghost": {"program": "ecc-no-such-program"}})
    missing = run_ecc("run", "--no-worktree", "--harness", "ghost", "do it", cwd=tmp_path)
    assert missing.returncode == 1
    ghost = store.latest_session()
    assert ghost is not None and ghost.state == State.FAILED
    assert ghost.reason == "cannot start ecc-no-such-program: No such file or directory"


def test_unknown_executor_is_refused_before_anything_is_written(
    tmp_path: Path, store: Store
) -> None:
    result = run_ecc("start", "--executor", "nope", "--no-worktree", "echo hi", cwd=tmp_path)
    assert result.returncode == 1
    assert "unknown executor 'nope'" in result.stderr and "local" in result.stderr
    assert store.list_sessions() == []
    assert get_executor("local").name == "local"
    with pytest.raises(EccError, match="unknown executor"):
        get_executor("nope")
