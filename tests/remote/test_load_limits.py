"""The server under load: large output pages, idle connections, many slow stops at once.

The tests run a real ``ecc remote serve`` and put data straight into its SQLite store (the
store API, so the test stays fast) or real processes behind its sessions.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

from ecc.store.models import State
from ecc.store.open import open_store
from tests.conftest import run_ecc
from tests.remote.conftest import Server, read_sse

LINE_BYTES = 64 * 1024
DEFAULT_RESPONSE_CAP = 4 * 1024 * 1024


def _store(server: Server):
    assert server.call("GET", "/v1/sessions").status == 200  # the server created the store
    return open_store(server.base / "home/.local/state/ecc/ecc.db")


def _session(store, server: Server, state: State = State.COMPLETED, **fields) -> str:
    session_id = uuid.uuid4().hex[:12]
    store.insert_session(
        session_id,
        task="print a lot",
        harness="shell",
        state=state,
        reason="",
        project_dir=str(server.root),
        working_dir=str(server.root),
        **fields,
    )
    return session_id


def _fill(store, session_id: str, count: int, size: int) -> None:
    """``count`` lines of ``size`` bytes; each begins with its number, to check the order."""
    batch = []
    for seq in range(1, count + 1):
        head = f"{seq:06d} "
        batch.append((seq, "stdout", "2025-01-01T00:00:00Z", head + "x" * (size - len(head))))
        if len(batch) == 100:
            store.append_output(session_id, batch)
            batch = []
    store.append_output(session_id, batch)


def _auth(server: Server) -> dict[str, str]:
    return {"Authorization": f"Bearer {server.token}"}


def _peak_rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    raise AssertionError("no VmHWM in /proc status")


def test_a_huge_output_page_is_capped_and_the_server_memory_stays_bounded(start_server) -> None:
    server: Server = start_server()
    with _store(server) as store:
        session_id = _session(store, server)
        _fill(store, session_id, 800, LINE_BYTES)  # 52 MB of output
    path = f"/v1/sessions/{session_id}/output"
    assert server.call("GET", path + "?limit=2").status == 200  # warm up the code path
    before = _peak_rss_kib(server.proc.pid)

    reply = server.call("GET", path + "?limit=5000")

    grown_mib = (_peak_rss_kib(server.proc.pid) - before) / 1024
    assert reply.status == 200
    assert grown_mib < 32, f"the server's peak memory grew by {grown_mib:.0f} MiB"
    assert len(reply.raw) <= DEFAULT_RESPONSE_CAP + 2 * LINE_BYTES, len(reply.raw)
    page = reply.body
    assert page["truncated"] is True and page["finished"] is False
    assert [line["seq"] for line in page["lines"]] == list(range(1, len(page["lines"]) + 1))
    assert page["next_after"] == page["lines"][-1]["seq"]

    # following the stream reads the same lines in batches of bounded size too
    before = _peak_rss_kib(server.proc.pid)
    conn = http.client.HTTPConnection(server.host, server.port, timeout=60)
    conn.request("GET", f"/v1/sessions/{session_id}/stream", headers=_auth(server))
    events = [event for event, _, _ in read_sse(conn.getresponse())]
    conn.close()
    grown_mib = (_peak_rss_kib(server.proc.pid) - before) / 1024
    assert events == ["line"] * 800 + ["end"]
    assert grown_mib < 32, f"streaming grew the server's peak memory by {grown_mib:.0f} MiB"


def test_the_client_fetches_every_line_across_capped_pages(start_server, isolated_env) -> None:
    server: Server = start_server(remote={"max_response_bytes": 256 * 1024})
    with _store(server) as store:
        session_id = _session(store, server)
        _fill(store, session_id, 60, 20_000)  # 1.2 MB: five pages or more
    reply = server.call("GET", f"/v1/sessions/{session_id}/output?limit=5000")
    assert reply.body["truncated"] is True
    assert len(reply.raw) <= 256 * 1024 + 20_100
    add = run_ecc("remote", "add", "lo", server.url, "--token-file", str(server.token_file))
    assert add.returncode == 0, add.stderr

    logs = run_ecc("logs", "--remote", "lo", session_id, "--json")
    assert logs.returncode == 0, logs.stderr
    seqs = [row["seq"] for row in json.loads(logs.stdout)]
    assert seqs == list(range(1, 61))

    tail = run_ecc("logs", "--remote", "lo", session_id, "--tail", "40")
    assert tail.returncode == 0, tail.stderr
    assert [line[:6] for line in tail.stdout.splitlines()] == [f"{n:06d}" for n in range(21, 61)]


def test_idle_connections_of_one_peer_do_not_lock_everyone_out(start_server) -> None:
    server: Server = start_server()
    idle = [socket.create_connection((server.host, server.port), timeout=30) for _ in range(64)]
    try:
        idle[0].sendall(b"GET /v1/health HTTP/1.1\r\n")  # half a request, never finished
        time.sleep(1.5)  # the server accepts them all, and they are idle for over a second
        health = server.call("GET", "/v1/health", token=None, timeout=10)
        assert health.status == 200, health.raw
        assert server.call("GET", "/v1/sessions", timeout=10).status == 200
        # the peer's oldest idle connections were closed, all but its allowance (8 by default)
        closed: set[socket.socket] = set()
        deadline = time.monotonic() + 10
        while len(closed) < 64 - 8 - 1 and time.monotonic() < deadline:
            readable, _, _ = select.select([s for s in idle if s not in closed], [], [], 0.2)
            for sock in readable:
                try:
                    if sock.recv(1) == b"":
                        closed.add(sock)
                except ConnectionResetError:
                    closed.add(sock)
        assert len(closed) >= 64 - 8 - 1, f"only {len(closed)} idle connections were closed"
    finally:
        for sock in idle:
            sock.close()


def test_requests_in_progress_are_capped_but_health_is_always_answered(start_server) -> None:
    server: Server = start_server(extra_args=["--max-connections", "2"])
    session_id = server.create("sleep 30")["id"]
    streams = []
    for _ in range(2):  # two requests in progress that last
        conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
        conn.request("GET", f"/v1/sessions/{session_id}/stream", headers=_auth(server))
        response = conn.getresponse()
        assert response.status == 200 and response.readline() == b": ecc stream\n"
        streams.append(conn)
    busy = server.call("GET", "/v1/sessions", timeout=10)
    assert busy.status == 503 and busy.body["error"] == "busy", busy.raw
    assert busy.headers["retry-after"] == "1"
    assert server.call("GET", "/v1/health", token=None, timeout=10).status == 200
    streams.pop().close()
    deadline = time.monotonic() + 10
    while server.call("GET", "/v1/sessions", timeout=10).status != 200:
        assert time.monotonic() < deadline, "the closed stream still counts"
        time.sleep(0.05)
    for conn in streams:
        conn.close()


STOPS = 45
STOP_DELAY = 3.0  # how long each runner takes to stop its session

# Runners that take STOP_DELAY seconds to stop: one process forks a child per session, which
# records itself as the session's runner, waits for SIGTERM, then records the session stopped.
SLOW_RUNNERS = """
import os, signal, sys, time
from pathlib import Path
from ecc.sessions import procs
from ecc.store.models import State
from ecc.store.open import open_store

db, delay, ids = Path(sys.argv[1]), float(sys.argv[2]), sys.argv[3:]
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
children = []
for session_id in ids:
    pid = os.fork()
    if pid == 0:
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)  # "ready" comes from the parent alone
        signal.sigwait({signal.SIGTERM})
        time.sleep(delay)
        with open_store(db) as store:
            store.transition(session_id, State.STOPPED, "stopped on request")
        os._exit(0)
    children.append(pid)
with open_store(db) as store:
    for session_id, pid in zip(ids, children):
        store.update_session(
            session_id, runner_pid=pid, runner_token=procs.token(pid), runner_host=procs.hostname()
        )
print("ready", flush=True)
for pid in children:
    os.waitpid(pid, 0)
"""


def test_many_slow_stops_at_once_do_not_delay_health(start_server) -> None:
    server: Server = start_server()
    with _store(server) as store:
        ids = [_session(store, server, State.RUNNING) for _ in range(STOPS)]
        runners = subprocess.Popen(
            [sys.executable, "-c", SLOW_RUNNERS, store.path, str(STOP_DELAY), *ids],
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        try:
            assert runners.stdout is not None
            assert select.select([runners.stdout], [], [], 30)[0], "the runners did not start"
            assert runners.stdout.readline() == "ready\n"
            results: dict[str, tuple[int, float]] = {}

            def stop(session_id: str) -> None:
                reply = server.call("POST", f"/v1/sessions/{session_id}/stop", {}, timeout=60)
                results[session_id] = (reply.status, time.monotonic())

            threads = [threading.Thread(target=stop, args=(i,)) for i in ids]
            for thread in threads:
                thread.start()
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:  # until (nearly) every stop is under way
                flagged = sum(bool(s.stop_requested) for s in map(store.get_session, ids) if s)
                if flagged >= 40:
                    break
                time.sleep(0.05)
            asked = time.monotonic()
            health = server.call("GET", "/v1/health", token=None, timeout=30)
            answered = time.monotonic()
            for thread in threads:
                thread.join(60)
        finally:
            os.killpg(runners.pid, signal.SIGKILL)
            runners.wait()
    assert health.status == 200
    first_stop = min(at for _, at in results.values())
    assert answered < first_stop, "health waited for a stop to finish"
    assert answered - asked < 2.0, f"health took {answered - asked:.1f}s"
    assert sorted(status for status, _ in results.values()) == [200] * STOPS
