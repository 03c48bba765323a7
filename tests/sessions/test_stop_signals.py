"""``ecc stop --grace N`` end to end, and how a harness killed by a signal is reported.

Real runners and supervisors, real signals: the fake harness is a Python script that counts the
SIGTERMs it receives in a file.
"""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import pytest

from ecc.sessions import procs
from ecc.store.base import Store
from tests.conftest import run_ecc
from tests.sessions.conftest import start, wait_until, write_config

HARNESS = """\
import signal, sys, time
counts, mode = sys.argv[1], sys.argv[2]
def on_term(signum, frame):
    with open(counts, "a") as handle:
        handle.write("TERM\\n")
    if mode == "exit":
        sys.exit(0)
signal.signal(signal.SIGTERM, on_term)
print("ready", flush=True)
while True:
    time.sleep(0.05)
"""


def _fake_harness(tmp_path: Path, mode: str) -> tuple[str, Path]:
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    counts = tmp_path / "sigterms"
    return f"exec {sys.executable} {script} {counts} {mode}", counts


def _started(store: Store, task: str, cwd: Path) -> str:
    sid = start(task, cwd, "--no-worktree")
    wait_until(lambda: any(r["line"] == "ready" for r in store.read_output(sid)), what="ready")
    return sid


def test_stop_honours_a_grace_longer_than_the_supervisors_and_sigterms_once(
    tmp_path: Path, store: Store
) -> None:
    write_config(Path.home(), stop_grace_secs=1)  # the supervisor's own grace is shorter
    task, counts = _fake_harness(tmp_path, "ignore")
    sid = _started(store, task, tmp_path)
    session = store.get_session(sid)
    assert session is not None
    began = time.monotonic()
    result = run_ecc("stop", sid, "--grace", "3", "--json")
    waited = time.monotonic() - began
    assert result.returncode == 0, result.stderr
    final = json.loads(result.stdout)
    assert final["state"] == "stopped"
    assert "SIGKILL" in final["reason"]
    assert waited > 2.5  # the requested 3 s, not the supervisor's 1 s
    assert waited < 20  # and no hang
    assert counts.read_text().splitlines() == ["TERM"]  # exactly one SIGTERM reached it
    wait_until(lambda: not procs.group_alive(session.harness_pgid), 10, "the group to end")


def test_a_harness_that_exits_on_sigterm_stops_promptly(tmp_path: Path, store: Store) -> None:
    task, counts = _fake_harness(tmp_path, "exit")
    sid = _started(store, task, tmp_path)
    began = time.monotonic()
    result = run_ecc("stop", sid, "--grace", "20", "--json")
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - began < 15  # well before the 20 s grace
    final = json.loads(result.stdout)
    assert final["state"] == "stopped" and "SIGKILL" not in final["reason"]
    assert counts.read_text().splitlines() == ["TERM"]


@pytest.mark.parametrize("name", ["SIGKILL", "SIGSEGV", "SIGTERM"])
def test_a_harness_killed_by_a_signal_is_reported_as_128_plus_n(
    tmp_path: Path, store: Store, name: str
) -> None:
    number = int(signal.Signals[name])
    task = f"ulimit -c 0; echo before; kill -{name.removeprefix('SIG')} $$; echo after"
    result = run_ecc("run", "--no-worktree", task, cwd=tmp_path)
    assert result.returncode == 128 + number, result.stderr
    session = store.latest_session()
    assert session is not None and session.state.value == "failed"
    assert session.exit_signal == number and session.exit_code is None
    assert session.reason == f"harness killed by {name}"
    assert [r["line"] for r in store.read_output(session.id)] == ["before"]
    runner_log = Path.home() / ".local/state/ecc/logs" / f"{session.id}.runner.log"
    for text in (result.stderr, result.stdout, runner_log.read_text(), session.reason):
        assert "Traceback" not in text and "Errno" not in text
    status = json.loads(run_ecc("status", session.id, "--json").stdout)
    assert status["exit_signal"] == number


@pytest.mark.parametrize("store_kind", ["sqlite"], indirect=True)
def test_terminating_a_paused_group_lets_it_handle_sigterm(tmp_path: Path) -> None:
    """A harness paused by back-pressure (SIGSTOP) cannot act on SIGTERM until continued: the
    stop must continue it, so it ends in its grace instead of being killed."""
    import subprocess

    marker = tmp_path / "got-term"
    script = (
        "import signal, sys, time\n"
        f"def bye(*_): open({str(marker)!r}, 'w').close(); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, process_group=0
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == b"ready\n"
        procs.signal_group(child.pid, signal.SIGSTOP)
        assert procs.terminate_group(child.pid, grace=10) == "SIGTERM"
        assert marker.exists()
    finally:
        child.kill()
        child.wait()
