"""Median whole-process wall time of ``ecc hook`` for one Claude Code PreToolUse payload.

Usage: python benchmarks/hook.py [--runs N]   (default 15 runs, after a warm-up that compiles the
config and plugin caches). Runs with throwaway state, cache and config directories and
``risk.enforce = true``; each run scores the call, records it in SQLite and answers.
Target: under 100 ms (a harness runs it before every tool call).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _timing import ecc_executable, time_command

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ecc-bench-hook-") as tmp:
        env = {
            "ECC_STATE_DIR": f"{tmp}/state",
            "ECC_CACHE_DIR": f"{tmp}/cache",
            "ECC_CONFIG_DIR": f"{tmp}/config",
            "ECC_DATA_DIR": f"{tmp}/data",
            "ECC__RISK__ENFORCE": "true",
        }
        payload = json.dumps(PAYLOAD).encode()
        baseline = time_command([sys.executable, "-c", "pass"], args.runs)
        print(f"python -c pass (interpreter baseline):     {baseline:7.1f} ms")
        commands = {
            "ecc hook --harness claude (as installed)": [ecc_executable()],
            "python -m ecc hook --harness claude": [sys.executable, "-m", "ecc"],
        }
        for label, prefix in commands.items():
            argv = [*prefix, "hook", "--harness", "claude"]
            median = time_command(argv, args.runs, env=env, input=payload, cwd=tmp)
            print(f"{label:<48} {median:7.1f} ms (median of {args.runs})")


if __name__ == "__main__":
    main()
