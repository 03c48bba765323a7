"""Dashboard first paint and idle CPU with 500 young sessions, against a bare Textual table.

Usage: python benchmarks/dashboard.py [--sessions N] [--runs N] [--idle SECS]

Creates ``--sessions`` queued sessions (all under two minutes old, so every age cell counts
seconds) in a throwaway store, then, in a fresh process per run, alternately:

* ``ecc``: ``DashboardApp`` run headless (``App.run_test``); first paint is the time from
  importing the app to its first idle screen with every row in the table; idle CPU is the
  process's CPU time over ``--idle`` seconds of doing nothing, as a share of one core;
* ``floor``: a bare ``App`` with one ``DataTable`` of the same rows (the same cells from the
  same cached configuration view and store, no polling).

The runs are interleaved, each round in the reverse order of the one before (ABBA), so drift in
a shared machine's load falls on every kind alike. Prints, for each kind, the median of
``--runs`` runs with the spread (lowest, quartiles, highest), wall and CPU time (the CPU time
of the process up to its first paint, interpreter start included, which load disturbs much
less), the median of the per-round ratios to the floor, and the load average before and after.
Targets: idle CPU under 1% of a core; first paint within 1.3x of the floor.
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
        from ecc.runtime.config.view import view
        from ecc.store.open import open_store
        from ecc.tui import data

        class Bare(App[None]):
            def compose(self):  # type: ignore[no-untyped-def]
                yield DataTable(id="sessions", cursor_type="row", zebra_stripes=True)

            def on_mount(self) -> None:
                config = view()  # the configuration the dashboard reads (no pydantic import)
                store = open_store(config=config)
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
        paint_cpu = time.process_time()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(idle)
        cpu = (time.process_time() - cpu0) / (time.perf_counter() - wall0)
    return {
        "paint_ms": paint * 1000,
        "paint_cpu_ms": paint_cpu * 1000,
        "idle_cpu_pct": cpu * 100,
        "rows": rows,
    }


def _spread(values: list[float]) -> str:
    """Lowest, quartiles and highest of ``values`` (the median is printed on its own)."""
    ordered = sorted(values)
    if len(ordered) < 4:
        return f"range {ordered[0]:.0f}-{ordered[-1]:.0f}"
    low, _, high = statistics.quantiles(ordered, n=4)
    return f"range {ordered[0]:.0f}-{ordered[-1]:.0f}, quartiles {low:.0f}-{high:.0f}"


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
        load_before = os.getloadavg()[0]
        for round_number in range(args.runs):
            names = list(kinds) if round_number % 2 == 0 else list(reversed(kinds))  # ABBA
            for name in names:
                run_env = env
                if name == "baseline":
                    run_env = {**env, "PYTHONPATH": str(Path(args.baseline).resolve())}
                out = subprocess.run(
                    [sys.executable, __file__, "--child", kinds[name], "--idle", str(args.idle)],
                    env=run_env,
                    cwd=work,
                    capture_output=True,
                    text=True,
                )
                if out.returncode:
                    sys.exit(f"{name} run failed:\n{out.stderr[-3000:]}")
                results[name].append(json.loads(out.stdout.strip().splitlines()[-1]))
        load_after = os.getloadavg()[0]
    _report(args, results, load_before, load_after)


def _report(
    args: argparse.Namespace,
    results: dict[str, list[dict[str, float]]],
    load_before: float,
    load_after: float,
) -> None:
    print(
        f"sessions: {args.sessions} (all under 2 minutes old), {args.runs} interleaved runs, "
        f"idle {args.idle} s; load average {load_before:.2f} before, {load_after:.2f} after"
    )
    for kind, runs in results.items():
        paint = [r["paint_ms"] for r in runs]
        cpu = [r["paint_cpu_ms"] for r in runs]
        idle = statistics.median(r["idle_cpu_pct"] for r in runs)
        print(
            f"{kind:>8}: first paint {statistics.median(paint):.0f} ms wall ({_spread(paint)}), "
            f"{statistics.median(cpu):.0f} ms CPU ({_spread(cpu)}); idle CPU {idle:.2f}% "
            f"of a core ({int(runs[0]['rows'])} rows)"
        )
    floor = results["floor"]
    for kind in (k for k in results if k != "floor"):
        for measure, label in (("paint_ms", "wall"), ("paint_cpu_ms", "CPU")):
            ratios = [a[measure] / b[measure] for a, b in zip(results[kind], floor, strict=True)]
            medians = statistics.median(r[measure] for r in results[kind]) / statistics.median(
                r[measure] for r in floor
            )
            print(
                f"{kind} first paint {label}: {medians:.2f}x the bare table (per-round ratios: "
                f"median {statistics.median(ratios):.2f}x, {min(ratios):.2f}-{max(ratios):.2f}x;"
                " target <= 1.3x)"
            )
    idle = statistics.median(r["idle_cpu_pct"] for r in results["ecc"])
    print(f"idle CPU: {idle:.2f}% (target < 1%)")


if __name__ == "__main__":
    main()
