"""The API's reads notice a session whose runner was killed (no daemon runs beside the server)."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from ecc.sessions import procs
from ecc.store.open import open_store
from tests.remote.conftest import Server


def _running(server: Server, session_id: str) -> tuple[int, int]:
    """The runner pid and harness group of the session once it runs."""
    store = open_store(Path(server.env["ECC_STATE_DIR"]) / "ecc.db")
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            session = store.get_session(session_id)
            if session is not None and session.state.value == "running" and session.runner_pid:
                return session.runner_pid, int(session.harness_pgid or 0)
            time.sleep(0.05)
    finally:
        store.close()
    raise AssertionError(f"session {session_id} never ran")


def _kill(pid: int, pgid: int) -> None:
    """SIGKILL the runner; return once its harness has ended too (its supervisor saw it die)."""
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while (procs.alive(pid) or procs.group_alive(pgid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not procs.alive(pid) and not procs.group_alive(pgid)


def test_get_and_list_fail_sessions_whose_runner_was_killed(start_server) -> None:
    server = start_server()
    got = server.create("echo ready; sleep 1000", name="got")["id"]
    listed = server.create("echo ready; sleep 1000", name="listed")["id"]
    (got_runner, got_group), (listed_runner, listed_group) = (
        _running(server, got),
        _running(server, listed),
    )
    _kill(got_runner, got_group)
    _kill(listed_runner, listed_group)
    detail = server.call("GET", f"/v1/sessions/{got}").body
    assert detail["state"] == "failed"
    assert f"runner process {got_runner} died" in detail["reason"]
    active = server.call("GET", "/v1/sessions").body["sessions"]
    assert listed not in [s["id"] for s in active]
    failed = server.call("GET", "/v1/sessions?state=failed").body["sessions"]
    assert {got, listed} <= {s["id"] for s in failed}
    reason = next(s["reason"] for s in failed if s["id"] == listed)
    assert f"runner process {listed_runner} died" in reason and "SIGKILL" in reason


def test_a_session_paused_for_a_conflict_is_listed_as_the_cli_lists_it(start_server) -> None:
    """Stopped, with an open conflict incident: it still wants a person, so the active listing
    shows it on every front (the API left it out while ``ecc sessions`` showed it)."""
    from ecc.store.models import State

    server = start_server()
    store = open_store(Path(server.env["ECC_STATE_DIR"]) / "ecc.db")
    try:
        for sid, state in (
            ("paused01", State.STOPPED),
            ("kept0001", State.RUNNING),
            ("done0001", State.STOPPED),  # stopped, part of no conflict: not listed
        ):
            store.insert_session(
                sid, task="t", harness="shell", state=state, reason="r",
                project_dir="/repo", working_dir="/repo", executor="elsewhere",
            )  # fmt: skip
        incident = store.open_conflict("/repo", "a.txt", ("paused01", "kept0001"), "escalate", "x")
        assert incident is not None
    finally:
        store.close()
    listed = [s["id"] for s in server.call("GET", "/v1/sessions").body["sessions"]]
    assert "paused01" in listed and "kept0001" in listed and "done0001" not in listed
    stopped = server.call("GET", "/v1/sessions?state=stopped").body["sessions"]
    assert {s["id"] for s in stopped} == {"paused01", "done0001"}
