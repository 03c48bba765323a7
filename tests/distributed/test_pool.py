"""Sessions on a real worker pool: Celery + Redis for placement, PostgreSQL as the truth."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from ecc.runtime.config import view as fastconfig
from ecc.sessions import manager, procs, service
from ecc.store.base import Store
from ecc.store.models import Session
from tests.conftest import git, run_ecc
from tests.distributed.conftest import Pool, wait_ready, write_client_config
from tests.sessions.conftest import wait_state, wait_until


def submit(store: Store, task: str, cwd: Path, use_worktree: bool = False) -> Session:
    """What ``ecc start --executor celery`` does, in-process (the client API)."""
    request = manager.Request(task=task, use_worktree=use_worktree, cwd=cwd, executor="celery")
    return service.start(store, request, fastconfig.view())


def ps_group(pgid: int) -> list[str]:
    """Live (non-zombie) members of process group ``pgid``, as ``ps`` lists them."""
    result = subprocess.run(
        ["ps", "-e", "-o", "pgid=,stat=,args="], capture_output=True, text=True, check=True
    )
    rows = [line.split(None, 2) for line in result.stdout.splitlines() if line.strip()]
    return [row[2] for row in rows if row[0] == str(pgid) and not row[1].startswith("Z")]


def kinds(store: Store, sid: str) -> list[str]:
    return [event["kind"] for event in store.list_events(sid)]


def test_twenty_sessions_across_two_workers_complete_with_all_output(
    store: Store, tmp_path: Path
) -> None:
    task = 'for i in $(seq 1 200); do echo "line $i of $ECC_SESSION_ID"; done; echo err >&2'
    sessions = [submit(store, task, tmp_path) for _ in range(20)]
    hosts = set()
    for session in sessions:
        final = wait_state(store, session.id, "completed", "failed", "stopped", timeout=90)
        assert final.state.value == "completed", final.reason
        assert final.attempts == 1 and final.executor == "celery"
        lines = [(r["stream"], r["line"]) for r in store.read_output(session.id)]
        expected = [("stdout", f"line {i} of {session.id}") for i in range(1, 201)]
        assert lines == [*expected, ("stderr", "err")]
        assert "duplicate_refused" not in kinds(store, session.id)
        hosts.add(final.runner_host)
    assert hosts == {f"w1@{procs.hostname()}", f"w2@{procs.hostname()}"}
    # a client read sees them through the CLI unchanged
    listed = json.loads(run_ecc("sessions", "--all", "--json").stdout)
    assert {s.id for s in sessions} <= {row["id"] for row in listed}


def test_stop_mid_session_kills_the_whole_process_group(store: Store, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    task = f"trap '' TERM; sleep 1000 & echo $! > {pids}; echo $$ >> {pids}; echo ready; wait"
    session = submit(store, task, tmp_path)
    wait_until(lambda: any(r["line"] == "ready" for r in store.read_output(session.id)), 30)
    running = wait_state(store, session.id, "running")
    pgid = running.harness_pgid
    assert pgid and len(ps_group(pgid)) >= 3  # supervisor, shell, sleep
    result = run_ecc("stop", session.id, "--grace", "0.5", "--json")
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["state"] == "stopped" and "SIGKILL" in final["reason"]
    wait_until(lambda: not ps_group(pgid), 10, "the process group to be empty (ps -g)")
    assert not any(procs.alive(int(p)) for p in pids.read_text().split())
    assert "stop" in kinds(store, session.id)


def test_worker_killed_mid_session_fails_by_lease_and_never_runs_twice(
    pool: Pool, store: Store, tmp_path: Path
) -> None:
    lone = pool.worker("w3").start(queue="ecc.lonely", concurrency=1)
    wait_ready(pool, [lone])
    config_queue = {"broker_url_file": str(pool.broker_file), "queue": "ecc.lonely"}
    write_client_config(pool, executors={"celery": config_queue})
    pids = tmp_path / "pids"
    session = submit(store, f"sleep 1000 & echo $! > {pids}; echo ready; wait", tmp_path)
    wait_until(lambda: store.count_output(session.id) == 1, 30, "first line")
    running = wait_state(store, session.id, "running")
    assert running.runner_host == lone.node
    lone.kill()
    killed_at = time.monotonic()
    status: dict[str, object] = {}

    def failed() -> bool:
        status.update(json.loads(run_ecc("status", session.id, "--json").stdout))
        return status["state"] == "failed"

    wait_until(failed, 10, "the reaper to fail the session")
    assert time.monotonic() - killed_at < 10
    assert "lease expired" in str(status["reason"]) and "not re-run" in str(status["reason"])
    wait_until(lambda: not ps_group(running.harness_pgid or 0), 10, "orphans to die")
    assert not procs.alive(int(pids.read_text().split()[0]))
    # the broker redelivers the request (as acks_late or a requeue would): refused, recorded
    app = pool.celery_app()
    try:
        app.send_task("ecc.run_session", args=[session.id], task_id=session.id)
    finally:
        app.close()
    wait_until(lambda: "duplicate_refused" in kinds(store, session.id), 20, "the refusal")
    final = store.get_session(session.id)
    assert final is not None and final.state.value == "failed" and final.attempts == 1
    assert store.count_output(session.id) == 1
    assert [e["to_state"] for e in store.list_events(session.id) if e["to_state"]].count(
        "running"
    ) == 1


def test_duplicate_delivery_while_running_is_refused_and_recorded(
    pool: Pool, store: Store, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    task = f"echo started; while [ ! -e {gate} ]; do sleep 0.05; done; echo done"
    session = submit(store, task, tmp_path)
    wait_state(store, session.id, "running", timeout=30)
    app = pool.celery_app()
    try:
        app.send_task("ecc.run_session", args=[session.id], task_id=session.id)
    finally:
        app.close()
    wait_until(lambda: "duplicate_refused" in kinds(store, session.id), 20, "the refusal")
    gate.write_text("go")
    final = wait_state(store, session.id, "completed", "failed", timeout=30)
    assert final.state.value == "completed" and final.attempts == 1
    assert [r["line"] for r in store.read_output(session.id)] == ["started", "done"]
    refusal = next(e for e in store.list_events(session.id) if e["kind"] == "duplicate_refused")
    assert "refused: session is running" in refusal["reason"]


def test_branch_pushed_to_the_remote_and_diff_visible_here(store: Store, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(remote))
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", str(remote), str(checkout))
    (checkout / "README.md").write_text("hello\n")
    git(checkout, "add", "README.md")
    git(checkout, "commit", "-q", "-m", "initial")
    git(checkout, "push", "-q", "origin", "main")
    base = git(checkout, "rev-parse", "HEAD").strip()
    task = (
        "echo feature > feature.txt && git add feature.txt && git commit -qm feature && "
        "echo left over > notes.txt && git rev-parse --abbrev-ref HEAD && pwd"
    )
    result = run_ecc("run", "--executor", "celery", "--worktree", task, cwd=checkout)
    assert result.returncode == 0, result.stderr
    session = store.latest_session()
    assert session is not None and session.state.value == "completed"
    assert session.repo_url == str(remote) and session.base_commit == base
    branch = f"ecc/{session.id}"
    out = result.stdout.splitlines()
    assert out[0] == branch
    assert "/w1/data/" in out[1] or "/w2/data/" in out[1]  # the worker's own worktree
    assert not Path(out[1]).exists()  # dropped after the push
    assert git(remote, "rev-parse", "--verify", f"refs/heads/{branch}").strip()
    kinds = [
        e["kind"] if e["kind"] != "transition" else e["to_state"]
        for e in store.list_events(session.id)
    ]
    # published before the final state: whoever waits for "completed" finds the branch pushed
    assert kinds.index("pushed") < kinds.index("completed")
    diff = run_ecc("worktree", "diff", session.id, cwd=checkout)
    assert diff.returncode == 0, diff.stderr
    assert "+feature" in diff.stdout and "+left over" in diff.stdout
    assert git(checkout, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_broker_credentials_never_on_a_command_line(pool: Pool, tmp_path: Path) -> None:
    seen = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getpgid(int(entry.name)) not in {w.proc.pid for w in pool.workers if w.proc}:
                continue
            cmdline = (entry / "cmdline").read_bytes().decode(errors="replace")
        except (OSError, ProcessLookupError):
            continue
        seen += 1
        assert "redis://" not in cmdline and "worker" in cmdline
    assert seen >= 2 * 3  # two workers, each a main process and two pool processes
    write_client_config(pool, executors={})
    result = run_ecc("worker", "--name", "w9")
    assert result.returncode == 1
    assert "the celery executor needs a broker" in result.stderr


def test_stop_before_any_worker_claims_it(pool: Pool, store: Store, tmp_path: Path) -> None:
    write_client_config(
        pool, executors={"celery": {"broker_url_file": str(pool.broker_file), "queue": "ecc.none"}}
    )
    session = submit(store, "echo should never run", tmp_path)  # no worker consumes ecc.none
    result = run_ecc("stop", session.id, "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["reason"] == "stopped before it started"
    app = pool.celery_app()  # the message reaches a worker after all: refused, recorded
    try:
        app.send_task("ecc.run_session", args=[session.id], task_id=session.id)
    finally:
        app.close()
    wait_until(lambda: "duplicate_refused" in kinds(store, session.id), 20, "the refusal")
    final = store.get_session(session.id)
    assert final is not None and final.state.value == "stopped" and final.attempts == 0
    assert store.count_output(session.id) == 0
