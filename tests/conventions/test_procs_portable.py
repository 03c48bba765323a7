"""Process identity, liveness and stopping go through one portable module (psutil)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from ecc.sessions import procs
from tests.conftest import REPO

# Linux-only process calls: reading procfs, prctl.
LINUX_ONLY = re.compile(r"/proc/\{|/proc/self|[\"']/proc[\"']|prctl")
ALLOWED = {
    "ecc/sessions/procs.py": "the one module",
    # Runs with -I -S (no site-packages, so no psutil): the parent-death signal is an extra
    # on Linux, guarded, and the supervisor leads and cleans its group everywhere.
    "ecc/sessions/supervisor.py": "standalone, stdlib only",
    "ecc/runtime/treewatch.py": "reads the mount table, not processes",
}
SOURCES = ("ecc", "ecc_plugins", "plugins", "adapters")


def test_no_linux_only_process_call_outside_procs():
    found = []
    for top in SOURCES:
        for path in sorted((REPO / top).rglob("*.py")):
            relative = path.relative_to(REPO).as_posix()
            if relative in ALLOWED or "/tests/" in f"/{relative}":
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if LINUX_ONLY.search(line):
                    found.append(f"{relative}:{number}: {line.strip()}")
    assert found == []


def test_identity_of_live_dead_zombie_and_reused_pids():
    me = os.getpid()
    assert procs.alive(me, procs.token(me))
    assert not procs.alive(me, "12345.5")  # another process's start time: a reused pid
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    deadline = time.monotonic() + 10
    while procs.alive(child.pid) and time.monotonic() < deadline:
        time.sleep(0.01)  # exited but not reaped: a zombie counts as dead
    assert not procs.alive(child.pid)
    child.wait()
    assert not procs.alive(child.pid) and procs.token(child.pid) is None


def test_a_token_recorded_before_psutil_still_matches():
    """Rows written by the procfs version hold the start time in clock ticks since boot."""
    raw = Path(f"/proc/{os.getpid()}/stat").read_text()
    ticks = raw[raw.rfind(")") + 2 :].split()[19]
    assert procs.alive(os.getpid(), ticks)
    assert not procs.alive(os.getpid(), str(int(ticks) + 1000))


def test_groups_children_and_files_held_open(tmp_path: Path):
    held = tmp_path / "spool.out"
    held.write_text("")
    leader = subprocess.Popen(
        [sys.executable, "-c", f"import time; f = open({str(held)!r}, 'a'); time.sleep(30)"],
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 10
        while not procs.group_holds_open(leader.pid, [held]) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert procs.group_holds_open(leader.pid, [held])
        assert not procs.group_holds_open(leader.pid, [tmp_path])
        assert procs.group_alive(leader.pid) and procs.leader_alive(leader.pid)
        assert procs.children(os.getpid()) and leader.pid in procs.children(os.getpid())
        assert procs.terminate_group(leader.pid, grace=10) == "SIGTERM"
    finally:
        leader.kill()
        leader.wait()
    assert not procs.group_alive(leader.pid)
    assert procs.signal_name(signal.SIGTERM) == "SIGTERM"
