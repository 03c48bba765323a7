"""The Claude Code adapter: argv, env, profile flags, detection and stream-json parsing."""

from __future__ import annotations

import json
from pathlib import Path

import ecc_adapter_claude as claude
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config
from ecc.runtime.plugins.loader import PluginSet

SAMPLES = Path(__file__).parent / "samples"
TRICKY = ["two words", 'it\'s "quoted"', "line one\nline two", "-x", "--dangerously-skip"]


def launch(task: str = "review this change", profile: AgentProfile | None = None, **kw):
    return LaunchContext(
        session_id="sess-1234",
        task=task,
        working_dir=kw.pop("working_dir", Path("/tmp/repo")),
        project_dir=Path("/tmp/repo"),
        config=Config(),
        profile=profile,
        **kw,
    )


def test_plain_command_puts_the_task_after_double_dash() -> None:
    argv = claude.ecc_build_command("claude", launch())
    assert argv == [
        "claude",
        "--print",
        "--verbose",
        "--output-format=stream-json",
        "--name=ecc-sess-1234",
        "--",
        "review this change",
    ]


def test_the_core_calls_it_for_claude_only() -> None:
    every = hooks_called_for(claude, "claude")
    assert len(every) == 9  # ecc_sync_surface among them
    assert hooks_called_for(claude, "codex") == []


def test_every_profile_field_becomes_a_flag_in_the_spec_order() -> None:
    profile = AgentProfile(
        model="sonnet",
        allowed_tools=["Read", "Edit"],
        disallowed_tools=["Bash"],
        permission_mode="plan",
        add_dirs=["docs", "specs"],
        max_budget_usd=1.25,
        token_budget=750,
        append_system_prompt="Review thoroughly.",
    )
    argv = claude.ecc_build_command("claude", launch(profile=profile))
    assert argv[5:] == [
        "--model=sonnet",
        "--allowed-tools=Read,Edit",
        "--disallowed-tools=Bash",
        "--permission-mode=plan",
        "--add-dir=docs",
        "--add-dir=specs",
        "--max-budget-usd=1.25",
        "--append-system-prompt=Review thoroughly.",
        "--",
        "review this change",
    ]
    # token_budget has no flag and is not folded into the task: ecc enforces it.
    assert argv[-1] == "review this change"


def test_budget_number_format() -> None:
    argv = claude.ecc_build_command("claude", launch(profile=AgentProfile(max_budget_usd=1.0)))
    assert "--max-budget-usd=1" in argv


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values_stay_single_argv_elements(value: str) -> None:
    profile = AgentProfile(
        model=value, add_dirs=[value], append_system_prompt=value, allowed_tools=[value]
    )
    argv = claude.ecc_build_command("claude", launch(task=value, profile=profile))
    assert argv[-2:] == ["--", value]
    assert f"--model={value}" in argv
    assert f"--add-dir={value}" in argv
    assert f"--append-system-prompt={value}" in argv
    assert f"--allowed-tools={value}" in argv
    # No element other than the task after "--" starts with a dash and is a bare value.
    before = argv[: argv.index("--")]
    assert all(arg.startswith("--") or arg == "claude" for arg in before)


def test_unknown_permission_mode_is_refused() -> None:
    profile = AgentProfile(permission_mode="yolo")
    translation = claude.ecc_translate_profile("claude", profile)
    assert "permission_mode" in translation.refused
    with pytest.raises(EccError, match="permission_mode"):
        claude.ecc_build_command("claude", launch(profile=profile))


def test_resume_uses_the_harness_session_id() -> None:
    argv = claude.ecc_resume_command("claude", launch(task="go on"), "6d19778f-aaaa")
    assert "--resume=6d19778f-aaaa" in argv
    assert argv[-2:] == ["--", "go on"]
    # Without an id the task simply runs again.
    assert claude.ecc_resume_command("claude", launch(), None) == claude.ecc_build_command(
        "claude", launch()
    )


def test_env(tmp_path: Path) -> None:
    (tmp_path / "pnpm-lock.yaml").write_text("")
    env = claude.ecc_session_env(
        "claude", launch(profile=AgentProfile(model="opus"), working_dir=tmp_path)
    )
    assert env == {
        "CLAUDE_SESSION_ID": "sess-1234",
        "CLAUDE_PROJECT_DIR": str(tmp_path),
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_PACKAGE_MANAGER": "pnpm",
        "CLAUDE_CODE_PACKAGE_MANAGER": "pnpm",
        "CLAUDE_MODEL": "opus",
    }
    assert "CLAUDE_MODEL" not in claude.ecc_session_env("claude", launch(working_dir=tmp_path))


def test_package_manager_evidence_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_PACKAGE_MANAGER", raising=False)
    home = tmp_path / "home"
    assert claude.detect_package_manager(tmp_path, home) == "npm"
    (tmp_path / "package-lock.json").write_text("{}")
    assert claude.detect_package_manager(tmp_path, home) == "npm"
    (tmp_path / "package.json").write_text(json.dumps({"packageManager": "pnpm@9.0.0"}))
    assert claude.detect_package_manager(tmp_path, home) == "pnpm"
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "package-manager.json").write_text('{"packageManager": "yarn"}')
    assert claude.detect_package_manager(tmp_path, home) == "yarn"
    monkeypatch.setenv("CLAUDE_PACKAGE_MANAGER", "bun")
    assert claude.detect_package_manager(tmp_path, home) == "bun"


def test_detection(tmp_path: Path) -> None:
    assert claude.ecc_detect_harness(tmp_path) is None
    (tmp_path / ".claude").mkdir()
    assert claude.ecc_detect_harness(tmp_path) == "claude"


def test_recorded_stream_is_parsed() -> None:
    events = []
    for line in (SAMPLES / "stream.jsonl").read_text().splitlines():
        events += claude.ecc_parse_output_line("claude", line, "stdout")
    kinds = [e.kind for e in events]
    assert kinds == ["harness_session", "tool_call", "harness_session", "usage", "final"]
    assert events[0].data == {"id": "6d19778f-3919-4262-a953-ae7fbe401bcc"}
    assert events[1].data["tool"] == "Bash"
    assert events[1].data["input"]["command"] == "echo hello > out.txt"
    assert events[3].data == {
        "input_tokens": 240,
        "output_tokens": 60,
        "cost_usd": 0.00162,
        "cumulative": False,
    }
    assert events[4].data == {"text": "STUB-FINAL: tool ran, done"}


def test_error_result_is_an_error_event() -> None:
    line = json.dumps(
        {"type": "result", "subtype": "error_max_budget_usd", "is_error": True, "usage": {}}
    )
    kinds = [e.kind for e in claude.ecc_parse_output_line("claude", line, "stdout")]
    assert kinds == ["usage", "error"]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "plain text",
        "{not json",
        "[1, 2]",
        '{"type": "result", "usage": "x", "result": 5}',
        '{"type": "assistant", "message": {"content": [1, {"type": "tool_use"}]}}',
        "{" * 5000,
    ],
)
def test_malformed_lines_never_raise(line: str) -> None:
    events = claude.ecc_parse_output_line("claude", line, "stdout")
    assert isinstance(events, list)


def test_stderr_carries_no_events() -> None:
    line = (SAMPLES / "stream.jsonl").read_text().splitlines()[0]
    assert claude.ecc_parse_output_line("claude", line, "stderr") == []


def test_registered_through_its_entry_point() -> None:
    plugin_set = PluginSet(Config())
    argv = plugin_set.harness_hook("claude").ecc_build_command(harness="claude", launch=launch())
    assert argv[0] == "claude"
    infos = [i for r in plugin_set.hook.ecc_harnesses(config=Config()) for i in ([r] if r else [])]
    assert any(getattr(i, "name", None) == "claude" for i in infos)


def test_the_sessions_mcp_server_goes_in_through_mcp_config(tmp_path: Path) -> None:
    from ecc.contract.types import SessionMcpServer

    assert "session_mcp" in claude.ecc_harnesses().capabilities
    server = SessionMcpServer(
        "ecc-sessions", ("/opt/ecc/bin/ecc-sessions-mcp",), {"ECC_SESSION_ID": "0a1b"}, tmp_path
    )
    launched = launch(mcp_servers=(server,))
    argv = claude.ecc_build_command("claude", launched)
    [flag] = [a for a in argv[: argv.index("--")] if a.startswith("--mcp-config=")]
    path = Path(flag.removeprefix("--mcp-config="))
    assert path.parent == tmp_path and path.stat().st_mode & 0o777 == 0o600
    assert json.loads(path.read_text()) == {
        "mcpServers": {
            "ecc-sessions": {
                "type": "stdio",
                "command": "/opt/ecc/bin/ecc-sessions-mcp",
                "args": [],
                "env": {"ECC_SESSION_ID": "0a1b"},
            }
        }
    }
    # connected before the first turn, so the agent has the tools from the start
    assert claude.ecc_session_env("claude", launched)["MCP_CONNECTION_NONBLOCKING"] == "0"
    plain = launch()
    assert not any(a.startswith("--mcp-config") for a in claude.ecc_build_command("claude", plain))
    assert "MCP_CONNECTION_NONBLOCKING" not in claude.ecc_session_env("claude", plain)
