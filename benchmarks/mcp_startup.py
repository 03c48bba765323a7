"""Time from spawning `ecc-memory-mcp` to its answer to `initialize` (median of N runs)."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def once(server: str, cwd: str) -> float:
    env = {**os.environ, "ECC_MEMORY_HARNESS": "bench"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [server], cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps(INITIALIZE) + "\n")
    proc.stdin.flush()
    line = proc.stdout.readline()
    elapsed = (time.perf_counter() - started) * 1000
    proc.stdin.close()
    proc.wait(timeout=30)
    assert json.loads(line)["id"] == 1
    return elapsed


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    server = str(Path(sys.executable).with_name("ecc-memory-mcp"))
    with tempfile.TemporaryDirectory() as cwd:
        times = [once(server, cwd) for _ in range(runs)]
    print(f"ecc-memory-mcp initialize: median {statistics.median(times):.0f} ms "
          f"(min {min(times):.0f}, max {max(times):.0f}, {runs} runs)")  # fmt: skip


if __name__ == "__main__":
    main()
