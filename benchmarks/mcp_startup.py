"""Time from spawning `ecc-memory-mcp` to its answer to `initialize`, and where it goes.

Usage: python benchmarks/mcp_startup.py [RUNS]   (default 7). Every figure is the median of RUNS
whole-process runs, taken in interleaved rounds (one run of each measure per round) so the load of
a shared machine falls on all of them alike. The floor is ``python -c pass``.

The breakdown imports, each in a fresh interpreter, the layers a stdio server on the official SDK
cannot do without (anyio, pydantic, the ``mcp_types`` protocol models the SDK's session validates
every message with, and their per-protocol-version method tables, which ``mcp.server.lowlevel``
imports at module level along with starlette, uvicorn and its auth routes), and the same
low-level server with the ``mcp`` package's ``__init__`` skipped: the difference is what the SDK's
top-level re-exports (its client among them) cost a server that never uses them (ecc defers
those: ``ecc.mcp.sdk``). What is left is unavoidable on the official SDK: the protocol models and
method tables (most of it), and the HTTP modules ``mcp.server.lowlevel`` imports at module level
(starlette, uvicorn, sse_starlette; shown on their own line), which only stand-ins for the names
it imports could keep out.
"""

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

# The low-level server without running ``mcp/__init__.py`` (and ``mcp/server/__init__.py``):
# empty package modules pointing at the real directories, so only the submodules load.
WITHOUT_PACKAGE_INIT = """
import importlib.util, os, sys, types
spec = importlib.util.find_spec("mcp")
root = spec.submodule_search_locations[0]
for name, path in (("mcp", root), ("mcp.server", os.path.join(root, "server"))):
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
import anyio, mcp_types
from mcp.server.lowlevel import Server
from mcp.shared.message import SessionMessage
"""

IMPORTS = {
    "import anyio": "import anyio",
    "import pydantic": "import pydantic",
    "import mcp_types (protocol models)": "import mcp_types",
    "+ mcp_types.methods (both versions)": "import mcp_types, mcp_types.methods",
    # imported at module level by mcp.server.lowlevel for its HTTP app, never run over stdio;
    # only stand-ins for the names it imports could keep them out (not done: fragile)
    "HTTP modules lowlevel imports anyway": (
        "import starlette.applications, starlette.routing, uvicorn, sse_starlette"
    ),
    "low-level server, no mcp/__init__": WITHOUT_PACKAGE_INIT,
    "import mcp.server.lowlevel (as shipped)": "import anyio, mcp_types, mcp.server.lowlevel",
}


def _initialize(server: str, cwd: str) -> float:
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


def _python(code: str) -> float:
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True)
    return (time.perf_counter() - started) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    server = str(Path(sys.executable).with_name("ecc-memory-mcp"))
    measures = {"python -c pass (floor)": lambda: _python("pass")}
    for label, code in IMPORTS.items():
        measures[label] = lambda code=code: _python(code)
    samples: dict[str, list[float]] = {label: [] for label in measures}
    with tempfile.TemporaryDirectory() as cwd:
        samples["ecc-memory-mcp initialize answered"] = []
        _initialize(server, cwd)  # warm-up: page cache, bytecode
        for _ in range(runs):
            for label, measure in measures.items():
                samples[label].append(measure())
            samples["ecc-memory-mcp initialize answered"].append(_initialize(server, cwd))
    print(f"load average {os.getloadavg()[0]:.2f}; medians of {runs} interleaved runs")
    for label, times in samples.items():
        print(f"{label:<40} {statistics.median(times):7.0f} ms "
              f"(min {min(times):.0f}, max {max(times):.0f})")  # fmt: skip


if __name__ == "__main__":
    main()
