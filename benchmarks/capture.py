"""Output capture throughput against its plain-Python floor, interleaved.

Usage: python benchmarks/capture.py [--lines N] [--runs N]

* ``ecc``: a ``shell`` session running ``seq 1 N`` (``ecc run -d``), from its start to its end
  as the store records them, every line checked to have arrived in order;
* ``floor``: plain Python reading the same ``seq`` through a pipe and inserting each line into
  an SQLite file with the same ``output`` table (WAL; pipe chunks split in bulk, one timestamp
  and one transaction per chunk, at most the runner's batch size of lines each).

* ``floor, grouped``: the same, inserting 100 rows a statement, as ecc's SQLite store does
  (:data:`ecc.store.sqlite.ROWS_PER_INSERT`): what plain Python gets with that one trick.

Prints medians of ``--runs`` runs of each and the ratios (target: ecc at or above 0.9x the
floor).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from sessions import wait_state

ECC = [sys.executable, "-m", "ecc"]
SCHEMA = """
CREATE TABLE output (
    id INTEGER PRIMARY KEY,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    stream TEXT NOT NULL,
    ts TEXT NOT NULL,
    line TEXT NOT NULL,
    UNIQUE (session_id, seq)
)
"""


def floor(lines: int, path: Path, batch: int, grouped: int = 1) -> float:
    """Lines per second of the plain-Python capture of ``seq 1 lines`` into ``path``,
    ``grouped`` rows an ``INSERT`` statement."""
    conn = sqlite3.connect(path)  # the module opens a transaction per batch, as the runner does
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute(SCHEMA)
    start = time.perf_counter()
    child = subprocess.Popen(["seq", "1", str(lines)], stdout=subprocess.PIPE)
    assert child.stdout is not None
    insert = "INSERT INTO output (session_id, seq, stream, ts, line) VALUES (?,?,?,?,?)"
    insert_grouped = insert + ",(?,?,?,?,?)" * (grouped - 1)
    seq, rest = 0, b""
    while chunk := child.stdout.read1(1 << 16):  # chunks split in bulk, one stamp per batch
        parts = (rest + chunk).split(b"\n")
        rest = parts.pop()
        ts = datetime.now(UTC).isoformat()
        for first in range(0, len(parts), batch):
            rows = [
                ("floor", seq + number, "stdout", ts, part.decode("utf-8", "replace"))
                for number, part in enumerate(parts[first : first + batch], start=1)
            ]
            seq += len(rows)
            whole = len(rows) - len(rows) % grouped
            with conn:
                if grouped > 1:
                    conn.executemany(
                        insert_grouped,
                        [
                            [value for row in rows[at : at + grouped] for value in row]
                            for at in range(0, whole, grouped)
                        ],
                    )
                conn.executemany(insert, rows[whole:] if grouped > 1 else rows)
    child.wait()
    span = time.perf_counter() - start
    conn.close()
    return lines / span


def ecc_capture(lines: int, work: Path, store: object) -> float:
    from ecc.store.models import parse_iso

    out = subprocess.run(
        [*ECC, "run", "-d", "--json", "--no-worktree", f"seq 1 {lines}"],
        cwd=work,
        capture_output=True,
        text=True,
        check=True,
    )
    sid = json.loads(out.stdout)["id"]
    session = wait_state(store, sid, {"completed", "failed"})
    span = (parse_iso(session.ended_at) - parse_iso(session.started_at)).total_seconds()
    count = store.count_output(sid)  # type: ignore[attr-defined]
    if count != lines:
        raise SystemExit(f"ecc captured {count} of {lines} lines")
    return lines / span


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    from ecc.sessions.capture import BATCH_LINES
    from ecc.store.sqlite import ROWS_PER_INSERT

    with tempfile.TemporaryDirectory(prefix="ecc-bench-capture-") as tmp:
        root = Path(tmp)
        for name in ("CONFIG", "STATE", "DATA", "CACHE"):
            os.environ[f"ECC_{name}_DIR"] = str(root / name.lower())
        (root / "config").mkdir()
        (root / "config" / "config.toml").write_text('default_harness = "shell"\n')
        work = root / "work"
        work.mkdir()
        from ecc.store.sqlite import SqliteStore

        store = SqliteStore(root / "state" / "ecc.db")
        ours, plain, grouped = [], [], []
        for run in range(args.runs):  # interleaved: the machine is shared
            ours.append(ecc_capture(args.lines, work, store))
            plain.append(floor(args.lines, root / f"floor-{run}.db", BATCH_LINES))
            grouped.append(
                floor(args.lines, root / f"grouped-{run}.db", BATCH_LINES, ROWS_PER_INSERT)
            )
        store.close()
    mine, base = statistics.median(ours), statistics.median(plain)
    best = statistics.median(grouped)
    print(f"capture of {args.lines:,} lines, {args.runs} runs (median lines/s)")
    print(f"  ecc:            {mine:,.0f} lines/s")
    print(f"  floor:          {base:,.0f} lines/s (plain Python into the same table)")
    print(f"  floor, grouped: {best:,.0f} lines/s ({ROWS_PER_INSERT} rows a statement)")
    print(f"  ratio: {mine / base:.2f}x the floor (target >= 0.9x), {mine / best:.2f}x grouped")


if __name__ == "__main__":
    main()
