"""Session benchmarks: ``ecc run -d`` latency, output capture throughput, idle daemon CPU.

Runs everything in temporary, isolated ECC_* directories with the built-in ``shell`` harness:

1. median wall time for ``ecc run -d`` to return (target < 150 ms);
2. capture throughput of a child printing ``--lines`` lines (default 1,000,000; target
   > 100,000 lines/s) and a check that every line arrived, in order;
3. the daemon's CPU use (and the runners') while 50 idle sessions run.

Usage: python benchmarks/sessions.py [--lines N] [--runs N] [--idle N] [--seconds S]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ECC = [sys.executable, "-m", "ecc"]
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def ecc(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ECC, *args], cwd=cwd, capture_output=True, text=True, check=True)


def wait_state(store: object, sid: str, states: set[str], timeout: float = 600) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        session = store.get_session(sid)  # type: ignore[attr-defined]
        if session.state.value in states:
            return session
        time.sleep(0.05)
    raise SystemExit(f"session {sid} did not reach {states}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--idle", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="ecc-bench-") as tmp:
        root = Path(tmp)
        for name in ("CONFIG", "STATE", "DATA", "CACHE"):
            os.environ[f"ECC_{name}_DIR"] = str(root / name.lower())
        (root / "config").mkdir()
        (root / "config" / "config.toml").write_text(
            'default_harness = "shell"\nheartbeat_interval_secs = 1.0\n'
            f"max_parallel_sessions = {args.idle + 10}\n"
        )
        work = root / "work"
        work.mkdir()
        from ecc.store.sqlite import SqliteStore

        store = SqliteStore(root / "state" / "ecc.db")

        # 1. ecc run -d latency
        ecc("run", "-d", "--no-worktree", "true", cwd=work)  # warm caches (stevedore, pyc)
        times = []
        for _ in range(args.runs):
            began = time.perf_counter()
            ecc("run", "-d", "--no-worktree", "true", cwd=work)
            times.append(time.perf_counter() - began)
        print(
            f"ecc run -d: median {statistics.median(times) * 1000:.0f} ms over {args.runs} "
            f"runs (min {min(times) * 1000:.0f} ms, target < 150 ms)"
        )

        # 2. capture throughput
        sid = json.loads(
            ecc("run", "-d", "--json", "--no-worktree", f"seq 1 {args.lines}", cwd=work).stdout
        )["id"]
        session = wait_state(store, sid, {"completed", "failed"})
        from ecc.store.models import parse_iso

        span = (parse_iso(session.ended_at) - parse_iso(session.started_at)).total_seconds()
        count = store.count_output(sid)
        wrong = store._one(
            "SELECT COUNT(*) AS n FROM output WHERE session_id = ? AND line != CAST(seq AS TEXT)",
            (sid,),
        )["n"]
        lost = args.lines - count
        print(
            f"capture: {args.lines} lines in {span:.2f} s = {args.lines / span:,.0f} lines/s "
            f"(target > 100,000); lost {lost}, out of order {wrong}"
        )

        # 3. daemon CPU with idle sessions
        ids = [
            json.loads(
                ecc("run", "-d", "--json", "--no-worktree", "sleep 100000", cwd=work).stdout
            )["id"]
            for _ in range(args.idle)
        ]
        running = [wait_state(store, i, {"running"}) for i in ids]
        daemon = subprocess.Popen([*ECC, "daemon"], cwd=work, stderr=subprocess.DEVNULL)
        time.sleep(2.0)  # start-up is not idle work
        d0 = cpu_seconds(daemon.pid)
        r0 = sum(cpu_seconds(s.runner_pid) for s in running)  # type: ignore[attr-defined]
        time.sleep(args.seconds)
        d1 = cpu_seconds(daemon.pid)
        r1 = sum(cpu_seconds(s.runner_pid) for s in running)  # type: ignore[attr-defined]
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
        print(
            f"daemon with {args.idle} idle sessions: {(d1 - d0) / args.seconds * 100:.2f}% "
            f"of one core; all {args.idle} runners together "
            f"{(r1 - r0) / args.seconds * 100:.2f}% (heartbeat 1 s)"
        )
        for s in running:
            for pgid in (s.harness_pgid, s.runner_pid):  # type: ignore[attr-defined]
                try:
                    os.killpg(pgid, signal.SIGKILL)
                except OSError:
                    pass
        store.close()


if __name__ == "__main__":
    main()
