"""ecc's hook for one managed codex process: ``--config`` overrides, trusted for that process only.

Codex reads each ``-c KEY=VALUE`` into its *session-flags* config layer, which can hold hooks
(``hooks.PreToolUse``) like any ``config.toml``. Codex runs an unmanaged hook only when its trust
state (``hooks.state."KEY".trusted_hash``) equals the hash of the hook's normalised definition,
and it reads that state from the user's layer and the session-flags layer only, never from a
project's. So the overrides here add ecc's hook and trust exactly that hook, by its hash:

* nothing is written to ``CODEX_HOME`` (auth, config and the threads ``exec resume`` finds stay
  the user's) or to the repository;
* ``--dangerously-bypass-hook-trust`` is not used: it would also run every untrusted hook codex
  discovers, among them a trusted checkout's own ``.codex/hooks.json``. A repository's hooks run
  only as the user trusted them; in a project the user never trusted codex does not read its
  ``.codex/`` at all;
* codex skips an untrusted hook without a word, so the hash must be codex's own: the SHA-256 of
  the compact JSON, keys sorted, of ``{"event_name": "pre_tool_use", "matcher", "hooks": [the
  handler with its timeout and "async": false]}`` (codex 0.171; the e2e tests run the real CLI).

The key path of ``-c`` is split on dots, so the state, whose key holds dots, goes in as an
inline table; a value that is not valid TOML would silently become a string, so every string is
written as an escaped TOML basic string.
"""

from __future__ import annotations

import hashlib
import json

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from ecc.contract.types import SessionEnforcement, SessionMcpServer

EVENT = "PreToolUse"
EVENT_LABEL = "pre_tool_use"  # codex's name for the event in hook state keys and hashes
MATCHER = "*"
# The file codex names its session-flags layer after: the first handler of the first group there.
STATE_KEY = f"/<session-flags>/config.toml:{EVENT_LABEL}:0:0"


def trusted_hash(command: str, timeout_secs: int) -> str:
    """The hash codex trusts the hook by (its normalised identity of the handler)."""
    handler = {"type": "command", "command": command, "timeout": timeout_secs, "async": False}
    identity = {"event_name": EVENT_LABEL, "matcher": MATCHER, "hooks": [handler]}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string: quote, backslash and control characters escaped."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def config_overrides(enforcement: SessionEnforcement) -> list[str]:
    """``KEY=VALUE`` overrides (for ``--config``) adding and trusting ecc's hook."""
    command = toml_string(enforcement.command)
    timeout = int(enforcement.timeout_secs)
    handler = f'{{type = "command", command = {command}, timeout = {timeout}}}'
    hooks = f"hooks.{EVENT}=[{{matcher = {toml_string(MATCHER)}, hooks = [{handler}]}}]"
    digest = toml_string(trusted_hash(enforcement.command, timeout))
    key = toml_string(STATE_KEY)
    state = f"hooks.state={{{key} = {{trusted_hash = {digest}, enabled = true}}}}"
    return [hooks, state]


def mcp_overrides(servers: tuple[SessionMcpServer, ...]) -> list[str]:
    """``KEY=VALUE`` overrides registering the session's MCP servers (``mcp_servers.NAME``).

    Codex starts an MCP server with a filtered environment; the variables binding ours are
    passed through by name (``env_vars``: the runner set them in codex's own environment), so
    their values (a store URL, say) never appear on a command line.
    """
    overrides = []
    for server in servers:
        key = f"mcp_servers.{server.name}"  # -c splits the key on dots: a bare name
        args = ", ".join(toml_string(arg) for arg in server.argv[1:])
        names = ", ".join(toml_string(name) for name in server.env)
        overrides += [
            f"{key}.command={toml_string(server.argv[0])}",
            f"{key}.args=[{args}]",
            f"{key}.env_vars=[{names}]",
        ]
    return overrides
