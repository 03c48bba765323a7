"""The memory server starts on the SDK's low-level server without loading the SDK's client."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, sys
from ecc.mcp.server import MemoryTools, build_server
build_server(MemoryTools())
import mcp_types
from mcp.shared.message import SessionMessage
started = sorted(m for m in ("mcp.client", "mcp.server.mcpserver") if m in sys.modules)
import mcp
client = mcp.ClientSession.__name__  # a name of the package's own __init__: it runs now
from mcp.server import MCPServer
print(json.dumps({"started": started, "client": client, "high_level": MCPServer.__name__,
                  "loaded": "mcp.client" in sys.modules}))
"""


def test_server_start_leaves_the_sdk_client_unloaded_yet_reachable(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ECC_MEMORY_HARNESS": "claude", "ECC_STATE_DIR": str(tmp_path)},
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "started": [],
        "client": "ClientSession",
        "high_level": "MCPServer",
        "loaded": True,
    }
