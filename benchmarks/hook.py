"""Median whole-process wall time of ``ecc hook`` for one Claude Code PreToolUse payload.

Usage: python benchmarks/hook.py [--runs N] [--baseline DIR]   (default 15 runs, after a warm-up
that compiles the config and plugin caches). ``--baseline`` also times ``python -m ecc hook`` of
another checkout (e.g. a ``git worktree`` of the previous commit), with caches of its own. Runs
with throwaway state, cache and config directories and ``risk.enforce = true``; each run scores
the call, records it in SQLite and answers. The measures run in interleaved rounds (one run of
each per round), so a shared machine's load falls on all of them alike; besides wall time each
prints the CPU time (user + system) the process used, which load disturbs much less. Target:
under 40 ms, 3x the interpreter (``python -c pass``). Two more floors show what the hook's imports
cannot avoid (json, which brings re and enum, and the ``_sqlite3`` driver with its shared library)
and what the ``sqlite3`` package and pathlib, which the hook no longer imports, would add (datetime,
urllib.parse, ipaddress). The main rows set ``ECC_*_DIR``, as ``ecc run`` does for the harness
of every session it starts (it found them already); one more row times a hook a user installed
with ``ecc hooks install`` and runs outside a session with no such variable: it finds its
directories through platformdirs (with pathlib and tempfile), from ``XDG_*_HOME``, unless an
earlier ecc process left platformdirs' answers in ``$XDG_RUNTIME_DIR`` (``ecc.runtime.dirmemo``):
one row each.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import ecc_executable

PAYLOAD = {
    "session_id": "bench",
    "transcript_path": "/tmp/bench.jsonl",
    "cwd": "/tmp",
    "hook_event_name": "PreToolUse",
    "permission_mode": "bypassPermissions",
    "tool_name": "Bash",
    "tool_input": {"command": "ls -la src && git status", "description": "look around"},
    "tool_use_id": "toolu_bench",
}


def _run(argv: list[str], env: dict[str, str], payload: bytes, cwd: str) -> tuple[float, float]:
    """Wall and CPU milliseconds of one run of ``argv``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, input=payload, capture_output=True, check=True, cwd=cwd)
    wall = (time.perf_counter() - started) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime) * 1000
    return wall, cpu


def _baseline_env(checkout: Path, tmp: str) -> dict[str, str]:
    """Run ``checkout``'s ecc and adapters ahead of the installed ones, with caches and state
    of its own (its cache records would not match this checkout's)."""
    roots = [checkout, *sorted(p for p in (checkout / "adapters").glob("*") if p.is_dir())]
    return {
        "PYTHONPATH": os.pathsep.join(str(root) for root in roots),
        "ECC_STATE_DIR": f"{tmp}/state",
        "ECC_CACHE_DIR": f"{tmp}/cache",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--baseline", metavar="DIR", help="also time another checkout (a directory holding ecc/)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ecc-bench-hook-") as tmp:
        env = {
            **os.environ,
            "ECC_STATE_DIR": f"{tmp}/state",
            "ECC_CACHE_DIR": f"{tmp}/cache",
            "ECC_CONFIG_DIR": f"{tmp}/config",
            "ECC_DATA_DIR": f"{tmp}/data",
            "ECC__RISK__ENFORCE": "true",
        }
        payload = json.dumps(PAYLOAD).encode()
        hook = ["hook", "--harness", "claude"]
        commands = {
            "python -c pass (interpreter floor)": [sys.executable, "-c", "pass"],
            # what no hook can skip: json reads the payload (re, enum), the _sqlite3 driver
            # records the call; then what the hook's path no longer imports: sqlite3's dbapi2
            # (datetime) and pathlib (config, store: urllib.parse, ipaddress)
            "  + import json, _sqlite3 (unavoidable)": [
                sys.executable,
                "-c",
                "import json, _sqlite3",
            ],
            "  + import sqlite3, pathlib (left out)": [
                sys.executable,
                "-c",
                "import json, sqlite3, pathlib",
            ],
            "ecc hook --harness claude (as installed)": [ecc_executable(), *hook],
            "python -m ecc hook --harness claude": [sys.executable, "-m", "ecc", *hook],
        }
        envs = {label: env for label in commands}
        # outside a session: platformdirs, or the memo an earlier hook left in the runtime dir
        unpinned = {k: v for k, v in env.items() if not k.endswith("_DIR")}
        os.mkdir(f"{tmp}/runtime", 0o700)
        for label, runtime in (
            ("ecc hook, no ECC_*_DIR: platformdirs", {}),
            ("ecc hook, no ECC_*_DIR: its memo", {"XDG_RUNTIME_DIR": f"{tmp}/runtime"}),
        ):
            commands[label] = [ecc_executable(), *hook]
            envs[label] = {**unpinned, **runtime}
            for kind in ("config", "state", "data", "cache"):  # each row's own, as above
                envs[label][f"XDG_{kind.upper()}_HOME"] = f"{tmp}/xdg-{len(envs)}/{kind}"
        if args.baseline:  # both through PYTHONPATH: its entries slow every import alike
            for name, checkout in (("this", Path(__file__).parent.parent), ("baseline", None)):
                root = Path(args.baseline) if checkout is None else checkout
                label = f"{name}: python -m ecc hook ({root.resolve()}, on PYTHONPATH)"
                commands[label] = [sys.executable, "-m", "ecc", *hook]
                envs[label] = {**env, **_baseline_env(root.resolve(), f"{tmp}/{name}")}
        samples: dict[str, list[tuple[float, float]]] = {label: [] for label in commands}
        for label, argv in commands.items():  # warm-up: compiles the config and plugin caches
            _run(argv, envs[label], payload, tmp)
        for _ in range(args.runs):
            for label, argv in commands.items():
                samples[label].append(_run(argv, envs[label], payload, tmp))
        print(f"load average {os.getloadavg()[0]:.2f}; medians of {args.runs} interleaved runs")
        for label, runs in samples.items():
            wall = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            print(f"{label:<44} {wall:7.1f} ms wall {cpu:7.1f} ms CPU")
        if args.baseline:
            print("(the PYTHONPATH rows import through its extra entries: compare them together)")


if __name__ == "__main__":
    main()
