"""Soak: many sessions flooding output while runners are SIGKILLed and the store is locked.

Runs everything in temporary, isolated ECC_* directories with the built-in ``shell`` harness
and a real ``ecc daemon`` (the recovery of killed runners):

* ``--sessions`` concurrent sessions (default 20) print ``--lines`` numbered lines in all
  (default 1,000,000): half flood (``seq``), half print in paced bursts over eight seconds or more.
  Every harness ignores SIGTERM and SIGHUP and the stop grace is long, so each one prints all of
  its lines even when its runner is killed: what was printed is known exactly;
* meanwhile ``--kills`` runners (default 8) get SIGKILL at random moments, and another process
  holds SQLite's write lock (``BEGIN IMMEDIATE`` on ``ecc.db``) ``--stalls`` times (default 6)
  for up to ``--stall-max`` seconds each (default 3, well inside ``store_retry_secs``);
* then it waits until every session has ended and every output spool is stored.

It prints lines printed against lines stored (goal: equal, each once and in order), the peak
resident memory of the runners (VmHWM; the largest and the median of their peaks), the
sessions left ``running`` without a live runner (goal: 0) and the spools left undrained
(goal: 0), and exits 1 when a goal is missed.

Usage: python benchmarks/soak.py [--sessions N] [--lines N] [--kills N] [--stalls N]
       [--stall-max SECONDS] [--seed N] [--timeout SECONDS]
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ECC = [sys.executable, "-m", "ecc"]
PACED = (
    "import sys, time\n"
    "n, bursts = int(sys.argv[1]), 80\n"
    "for b in range(bursts):\n"
    "    lo, hi = b * n // bursts + 1, (b + 1) * n // bursts\n"
    "    sys.stdout.write(''.join(f'{i}\\n' for i in range(lo, hi + 1)))\n"
    "    sys.stdout.flush()\n"
    "    time.sleep(0.1)\n"
)


def vm_hwm_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except OSError:
        return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--lines", type=int, default=1_000_000, help="in all, over the sessions")
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--stalls", type=int, default=6)
    parser.add_argument("--stall-max", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=21)
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    per_session = args.lines // args.sessions

    with tempfile.TemporaryDirectory(prefix="ecc-soak-") as tmp:
        root = Path(tmp)
        for name in ("CONFIG", "STATE", "DATA", "CACHE"):
            os.environ[f"ECC_{name}_DIR"] = str(root / name.lower())
        (root / "config").mkdir()
        (root / "config" / "config.toml").write_text(
            'default_harness = "shell"\nheartbeat_interval_secs = 0.5\nstop_grace_secs = 60\n'
            f"max_parallel_sessions = {args.sessions + 2}\n"
        )
        work = root / "work"
        work.mkdir()
        paced = root / "paced.py"
        paced.write_text(PACED)
        db_path = root / "state" / "ecc.db"
        from ecc.store.sqlite import SqliteStore

        store = SqliteStore(db_path)
        daemon = subprocess.Popen(
            [*ECC, "daemon", "--interval", "1"], cwd=work, stderr=subprocess.DEVNULL
        )
        began = time.monotonic()
        ids = []
        for number in range(args.sessions):
            if number % 2:
                task = f"trap '' TERM HUP; {sys.executable} {paced} {per_session}"
            else:
                task = f"trap '' TERM HUP; seq 1 {per_session}"
            out = subprocess.run(
                [*ECC, "run", "-d", "--json", "--no-worktree", task],
                cwd=work,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            ids.append(json.loads(out)["id"])

        peaks: dict[int, int] = {}
        done = threading.Event()
        kills: list[str] = []
        stalled: list[float] = []

        def note_peak(pid: int) -> None:
            peaks[pid] = max(peaks.get(pid, 0), vm_hwm_kib(pid))

        def sample() -> None:  # each thread has its own connection
            with store.reopen() as mine:
                while not done.is_set():
                    for row in mine._rows("SELECT runner_pid FROM sessions"):
                        if row["runner_pid"]:
                            note_peak(row["runner_pid"])
                    time.sleep(0.1)

        def kill() -> None:
            with store.reopen() as mine:
                while len(kills) < args.kills and not done.wait(rng.uniform(0.1, 0.8)):
                    running = [
                        s
                        for s in mine.list_sessions()
                        if s.state.value == "running" and s.runner_pid
                    ]
                    if running:
                        victim = rng.choice(running)
                        note_peak(victim.runner_pid)
                        try:
                            os.kill(victim.runner_pid, signal.SIGKILL)
                            kills.append(victim.id)
                        except OSError:
                            pass

        def stall() -> None:
            while len(stalled) < args.stalls and not done.wait(rng.uniform(0.2, 1.0)):
                holder = sqlite3.connect(db_path, isolation_level=None, timeout=60)
                try:
                    holder.execute("BEGIN IMMEDIATE")
                    seconds = rng.uniform(0.5, args.stall_max)
                    time.sleep(seconds)
                    holder.execute("COMMIT")
                    stalled.append(seconds)
                finally:
                    holder.close()

        threads = [threading.Thread(target=f, daemon=True) for f in (sample, kill, stall)]
        for thread in threads:
            thread.start()

        def settled() -> bool:
            active = [s for s in store.list_sessions() if not s.terminal]
            return not active and not any((root / "state" / "spool").glob("*"))

        deadline = time.monotonic() + args.timeout
        while not settled() and time.monotonic() < deadline:
            time.sleep(0.5)
        took = time.monotonic() - began
        done.set()
        for thread in threads:
            thread.join(timeout=args.stall_max + 5)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)

        printed = per_session * len(ids)
        stored = lost = duplicated = disordered = other = 0
        completed = failed = 0
        for sid in ids:
            rows = store.read_output(sid)
            lines = [row["line"] for row in rows if row["stream"] == "stdout"]
            other += len(rows) - len(lines)
            expected = {str(n) for n in range(1, per_session + 1)}
            stored += len(lines)
            distinct = set(lines)
            duplicated += len(lines) - len(distinct)
            lost += len(expected - distinct)
            numbers = [int(line) for line in lines if line.isdigit()]
            disordered += int(any(b <= a for a, b in itertools.pairwise(numbers)))
            state = store.get_session(sid).state.value  # type: ignore[union-attr]
            completed += state == "completed"
            failed += state == "failed"
        orphans = [
            s.id
            for s in store.list_sessions()
            if not s.terminal and not alive(s.runner_pid)  # left "running" without a process
        ]
        spools = sorted(p.name for p in (root / "state" / "spool").glob("*"))
        for session in store.list_sessions():  # nothing of this run may outlive it
            for group in (session.harness_pgid, session.runner_pid):
                if group:
                    try:
                        os.killpg(group, signal.SIGKILL)
                    except OSError:
                        pass
        store.close()

    rss = [kib / 1024 for kib in peaks.values() if kib]
    rows_out = [
        ("sessions", f"{len(ids)} ({per_session:,} lines each; half seq, half paced)"),
        ("runner SIGKILLs", f"{len(kills)}"),
        ("store lock stalls", f"{len(stalled)} ({sum(stalled):.1f} s in all)"),
        ("lines printed", f"{printed:,}"),
        ("lines stored", f"{stored:,} (goal: equal)"),
        ("lost / duplicated lines", f"{lost:,} / {duplicated:,}"),
        ("sessions with lines out of order", f"{disordered}"),
        ("other output lines (stderr)", f"{other:,}"),
        ("sessions completed / failed", f"{completed} / {failed}"),
        ("left running without a process", f"{len(orphans)} (goal: 0)"),
        ("output spools left undrained", f"{len(spools)} (goal: 0)"),
        (
            "peak runner RSS",
            f"{max(rss, default=0):.1f} MB (median of the runners' peaks "
            f"{statistics.median(rss) if rss else 0:.1f} MB)",
        ),
        ("wall time", f"{took:.1f} s ({stored / took:,.0f} lines/s stored)"),
    ]
    width = max(len(name) for name, _ in rows_out)
    for name, value in rows_out:
        print(f"{name:<{width}}  {value}")
    ok = stored == printed and not lost and not duplicated and not disordered
    return 0 if ok and not orphans and not spools else 1


if __name__ == "__main__":
    sys.exit(main())
