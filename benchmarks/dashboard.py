"""Dashboard first paint and idle CPU with 500 young sessions, against a bare Textual table.

Usage: python benchmarks/dashboard.py [--sessions N] [--runs N] [--idle SECS]

Creates ``--sessions`` queued sessions (all under two minutes old, so every age cell counts
seconds) in a throwaway store, then, in a fresh process per run, alternately:

* ``ecc``: ``DashboardApp`` run headless (``App.run_test``); first paint is the time from
  importing the app to its first idle screen with every row in the table; idle CPU is the
  process's CPU time over ``--idle`` seconds of doing nothing, as a share of one core;
* ``floor``: a bare ``App`` with one ``DataTable`` of the same rows (the same cells, no polling).

Prints the median of ``--runs`` runs of each and the ratios. Targets: idle CPU under 1% of a
core; first paint within 1.3x of the floor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = (160, 50)


def _env(tmp: str) -> dict[str, str]:
    return {
        **os.environ,
        "HOME": f"{tmp}/home",
        "ECC_STATE_DIR": f"{tmp}/state",
        "ECC_CACHE_DIR": f"{tmp}/cache",
        "ECC_CONFIG_DIR": f"{tmp}/config",
        "ECC_DATA_DIR": f"{tmp}/data",
    }


def _populate(count: int, cwd: Path) -> None:
    from ecc.runtime.config.model import get_config
    from ecc.sessions import manager
    from ecc.store.open import open_store

    store = open_store()
    config = get_config()
    for number in range(count):
        request = manager.Request(
            task=f"benchmark task number {number}", harness="shell", use_worktree=False, cwd=cwd
        )
        manager.create(store, request, config)
    store.close()


async def _measure(kind: str, idle: float) -> dict[str, float]:
    start = time.perf_counter()  # both sides pay for their own imports
    from textual.app import App
    from textual.widgets import DataTable

    if kind == "ecc":
        from ecc.tui.app import DashboardApp

        app: App[None] = DashboardApp()
    else:
        from ecc.runtime.config.model import get_config
        from ecc.store.open import open_store
        from ecc.tui import data

        class Bare(App[None]):
            def compose(self):  # type: ignore[no-untyped-def]
                yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)

            def on_mount(self) -> None:
                store = open_store()
                config = get_config()
                table = self.query_one(DataTable)
                for key, label in data.COLUMNS:
                    table.add_column(label, key=key)
                now = data.wall_clock()
                for session in sorted(store.list_sessions(), key=data.sort_key, reverse=True):
                    cells = data.row_cells(session, None, config, now)
                    table.add_row(*(cells[key] for key, _ in data.COLUMNS), key=session.id)
                store.close()

        app = Bare()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = app.query_one("#sessions", DataTable).row_count
        paint = time.perf_counter() - start
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(idle)
        cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return {"paint_ms": paint * 1000, "idle_cpu_pct": cpu * 100, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--idle", type=float, default=5.0)
    parser.add_argument(
        "--baseline",
        metavar="DIR",
        help="also time the dashboard of another checkout (a directory holding its ecc/)",
    )
    parser.add_argument("--child", choices=("ecc", "floor"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(asyncio.run(_measure(args.child, args.idle))))
        return
    with tempfile.TemporaryDirectory(prefix="ecc-bench-dashboard-") as tmp:
        env = _env(tmp)
        os.environ.update(env)
        Path(tmp, "home").mkdir()
        work = Path(tmp, "work")
        work.mkdir()
        _populate(args.sessions, work)
        kinds = {"ecc": "ecc", "floor": "floor"}
        if args.baseline:
            kinds["baseline"] = "ecc"
        results: dict[str, list[dict[str, float]]] = {name: [] for name in kinds}
        for _ in range(args.runs):
            for name, kind in kinds.items():  # interleaved: the machine is shared
                run_env = env
                if name == "baseline":
                    run_env = {**env, "PYTHONPATH": str(Path(args.baseline).resolve())}
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kind, "--idle", str(args.idle)],
                    env=run_env,
                    cwd=work,
                    capture_output=True,
                    text=True,
                    check=True,
                )
                results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
    medians = {
        kind: {m: statistics.median(r[m] for r in runs) for m in ("paint_ms", "idle_cpu_pct")}
        for kind, runs in results.items()
    }
    rows = {kind: int(runs[0]["rows"]) for kind, runs in results.items()}
    print(
        f"sessions: {args.sessions} (all under 2 minutes old), {args.runs} runs, idle {args.idle} s"
    )
    for kind in results:
        m = medians[kind]
        print(
            f"{kind:>8}: first paint {m['paint_ms']:.0f} ms, idle CPU {m['idle_cpu_pct']:.2f}% "
            f"of a core ({rows[kind]} rows)"
        )
    ratio = medians["ecc"]["paint_ms"] / medians["floor"]["paint_ms"]
    print(f"first paint ratio: {ratio:.2f}x the bare table (target <= 1.3x)")
    print(f"idle CPU: {medians['ecc']['idle_cpu_pct']:.2f}% (target < 1%)")


if __name__ == "__main__":
    main()
