"""Applying ecc's hook (``LaunchContext.enforcement``) and MCP servers (``mcp_servers``) to one
managed session's harness process.

An adapter declaring the ``session_hooks`` capability adds the hook the session hands it
(:class:`ecc.contract.types.SessionEnforcement`) to the harness for that process only: a flag, an
environment variable, or a settings file in the session's private directory, written here. The
hook entry has the same shape as the one ``ecc hooks install`` writes into a Claude-style
``hooks`` table (:func:`ecc.adapterkit.install.hook_entry`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from typing import Any

    from ecc.contract.types import SessionEnforcement, SessionMcpServer


def hooks_table(
    enforcement: SessionEnforcement,
    event: str,
    *,
    matcher: str = "*",
    milliseconds: bool = False,
) -> dict[str, list[dict[str, Any]]]:
    """``{event: [entry]}``: a Claude-style ``hooks`` table running the session's hook."""
    from ecc.adapterkit.install import hook_entry

    entry = hook_entry(enforcement.command, enforcement.timeout_secs, matcher, milliseconds)
    return {event: [entry]}


def write_settings(enforcement: SessionEnforcement, name: str, data: Any) -> Path:
    """Write ``data`` as the JSON file ``name`` in the session's private directory (0600, whole
    or not at all) and return its path, for a harness that reads its hooks from a file."""
    return write_private(Path(enforcement.directory), name, data)


def mcp_servers_table(servers: tuple[SessionMcpServer, ...]) -> dict[str, dict[str, Any]]:
    """``{name: entry}``: the session's MCP servers as a Claude-style ``mcpServers`` table."""
    return {
        server.name: {
            "type": "stdio",
            "command": server.argv[0],
            "args": list(server.argv[1:]),
            "env": dict(server.env),
        }
        for server in servers
    }


def write_private(directory: Path, name: str, data: Any) -> Path:
    """Write ``data`` as the JSON file ``name`` in a session's private ``directory`` (0600,
    whole or not at all) and return its path."""
    path = Path(directory) / name
    temporary = path.with_name(f".{name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    os.replace(temporary, path)
    return path
