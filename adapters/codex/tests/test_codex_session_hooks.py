"""A managed codex session's hook: ``--config`` overrides (codex's session-flags layer) adding
ecc's ``PreToolUse`` hook and trusting exactly that hook, in the start and the resume command."""

from __future__ import annotations

import hashlib
import json
import tomllib
from pathlib import Path
from typing import Any

import ecc_adapter_codex as codex
import pytest

from ecc.contract.types import LaunchContext, SessionEnforcement
from ecc.runtime.config.model import AgentProfile, Config

COMMAND = "/opt/ecc/bin/ecc hook --harness codex --managed"
# What codex 0.171.0 itself computes for this hook, the SHA-256 of {"event_name":"pre_tool_use",
# "hooks":[{"async":false,"command":COMMAND,"timeout":630,"type":"command"}],"matcher":"*"}
# (checked against the real CLI: with it the hook runs; with another value or none codex skips
# the hook without a word).
GOLDEN_HASH = "sha256:c1656dd93db82d8e9291e825fb74fad2bd1662bdf70c5e12c8e85da313e44236"
STATE_KEY = "/<session-flags>/config.toml:pre_tool_use:0:0"


def enforcement(tmp_path: Path, command: str = COMMAND, timeout: int = 630) -> SessionEnforcement:
    return SessionEnforcement(
        command=command, argv=tuple(command.split()), timeout_secs=timeout, directory=tmp_path
    )


def launch(tmp_path: Path, hook: SessionEnforcement | None, **profile: Any) -> LaunchContext:
    return LaunchContext(
        session_id="sess-1234",
        task="review this change",
        working_dir=Path("/tmp/repo"),
        project_dir=Path("/tmp/repo"),
        config=Config(),
        profile=AgentProfile(**profile) if profile else None,
        enforcement=hook,
    )


def overrides(argv: list[str]) -> dict[str, Any]:
    """The ``--config KEY=VALUE`` overrides before ``--``, parsed as codex parses them (the value
    as TOML; a dotted key split on dots), merged into one table."""
    table: dict[str, Any] = {}
    for arg in argv[: argv.index("--")]:
        if not arg.startswith("--config="):
            continue
        key, _, value = arg.removeprefix("--config=").partition("=")
        parsed = tomllib.loads(f"_x_ = {value}")["_x_"]  # codex falls back to a string silently
        *parents, last = key.split(".")
        node = table
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = parsed
    return table


def test_declares_session_hooks() -> None:
    assert "session_hooks" in codex.ecc_harnesses().capabilities


@pytest.mark.parametrize("resume", [False, True])
def test_the_hook_and_its_trust_go_in_as_config_overrides(tmp_path: Path, resume: bool) -> None:
    launched = launch(tmp_path, enforcement(tmp_path))
    if resume:
        argv = codex.ecc_resume_command("codex", launched, "thread-1")
        assert argv[-2:] == ["thread-1", "review this change"]
    else:
        argv = codex.ecc_build_command("codex", launched)
    hooks = overrides(argv)["hooks"]
    assert hooks["PreToolUse"] == [
        {"matcher": "*", "hooks": [{"type": "command", "command": COMMAND, "timeout": 630}]}
    ]
    # Trusted for this process only, by codex's own identity hash of exactly this hook.
    assert hooks["state"] == {STATE_KEY: {"trusted_hash": GOLDEN_HASH, "enabled": True}}
    # Nothing else is let run: no blanket bypass of hook trust, no file of the user's or the
    # repository's written, CODEX_HOME (auth, config, the threads resume finds) left alone.
    assert "--dangerously-bypass-hook-trust" not in argv
    assert list(tmp_path.iterdir()) == []
    assert codex.ecc_session_env("codex", launched) == {}


def test_the_trust_follows_the_command_and_timeout(tmp_path: Path) -> None:
    other = overrides(
        codex.ecc_build_command("codex", launch(tmp_path, enforcement(tmp_path, timeout=60)))
    )
    assert other["hooks"]["state"][STATE_KEY]["trusted_hash"] != GOLDEN_HASH
    from ecc_adapter_codex.sessionhooks import trusted_hash

    assert trusted_hash(COMMAND, 630) == GOLDEN_HASH


@pytest.mark.parametrize(
    "command",
    [
        '/home/o\'neil/"ecc" hook --harness codex --managed',
        "C:\\ecc\\ecc.exe hook --harness codex --managed",
        "/tmp/ünïcødé €/ecc hook\t--managed",
        "/tmp/odd\x7f\x01name/ecc hook --managed",
    ],
)
def test_any_command_reaches_codex_whole(tmp_path: Path, command: str) -> None:
    argv = codex.ecc_build_command("codex", launch(tmp_path, enforcement(tmp_path, command)))
    hooks = overrides(argv)["hooks"]
    assert hooks["PreToolUse"][0]["hooks"][0]["command"] == command
    identity = {
        "event_name": "pre_tool_use",
        "hooks": [{"async": False, "command": command, "timeout": 630, "type": "command"}],
        "matcher": "*",
    }
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    expected = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    assert hooks["state"][STATE_KEY]["trusted_hash"] == expected


def test_bypass_profile_keeps_the_hook(tmp_path: Path) -> None:
    launched = launch(tmp_path, enforcement(tmp_path), permission_mode="bypassPermissions")
    for argv in (
        codex.ecc_build_command("codex", launched),
        codex.ecc_resume_command("codex", launched, "thread-1"),
    ):
        assert "--dangerously-bypass-approvals-and-sandbox" in argv
        assert overrides(argv)["hooks"]["PreToolUse"][0]["hooks"][0]["command"] == COMMAND


def test_unmanaged_session_has_no_hook(tmp_path: Path) -> None:
    for argv in (
        codex.ecc_build_command("codex", launch(tmp_path, None)),
        codex.ecc_resume_command("codex", launch(tmp_path, None), "thread-1"),
    ):
        assert "hooks" not in overrides(argv)


def _server(tmp_path: Path) -> Any:
    from ecc.contract.types import SessionMcpServer

    env = {"ECC_SESSION_ID": "0123456789ab", "ECC_STATE_DIR": '/tmp/st "q"'}
    return SessionMcpServer("ecc-sessions", ("/opt/ecc/bin/ecc-sessions-mcp", "-v"), env, tmp_path)


@pytest.mark.parametrize("resume", [False, True])
def test_the_sessions_mcp_server_goes_in_as_config_overrides(tmp_path: Path, resume: bool) -> None:
    assert "session_mcp" in codex.ecc_harnesses().capabilities
    launched = launch(tmp_path, enforcement(tmp_path))
    launched.mcp_servers = (_server(tmp_path),)
    if resume:
        argv = codex.ecc_resume_command("codex", launched, "thread-1")
    else:
        argv = codex.ecc_build_command("codex", launched)
    table = overrides(argv)
    assert table["mcp_servers"] == {
        "ecc-sessions": {
            "command": "/opt/ecc/bin/ecc-sessions-mcp",
            "args": ["-v"],
            "env_vars": ["ECC_SESSION_ID", "ECC_STATE_DIR"],  # passed by name, not value
        }
    }
    assert not any("0123456789ab" in arg for arg in argv)
    assert "PreToolUse" in table["hooks"]  # beside the session's hook, not instead of it
    assert "mcp_servers" not in overrides(codex.ecc_build_command("codex", launch(tmp_path, None)))
