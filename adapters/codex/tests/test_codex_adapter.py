"""The Codex adapter: argv, sandbox from permission_mode, refusals, resume, --json parsing."""

from __future__ import annotations

import json
from pathlib import Path

import ecc_adapter_codex as codex
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config
from ecc.runtime.plugins.loader import PluginSet

SAMPLES = Path(__file__).parent / "samples"
TRICKY = ["two words", 'it\'s "quoted"', "line one\nline two", "-x", "--dangerously-bypass"]
HEAD = ["codex", "exec", "--skip-git-repo-check"]


def launch(task: str = "review this change", profile: AgentProfile | None = None):
    return LaunchContext(
        session_id="sess-1234",
        task=task,
        working_dir=Path("/tmp/repo"),
        project_dir=Path("/tmp/repo"),
        config=Config(),
        profile=profile,
    )


def test_plain_command() -> None:
    assert codex.ecc_build_command("codex", launch()) == [
        *HEAD,
        "--sandbox=workspace-write",
        "--cd=/tmp/repo",
        "--color=never",
        "--json",
        "--",
        "review this change",
    ]


def test_not_ours() -> None:
    every = hooks_called_for(codex, "codex")
    assert len(every) == 9  # + ecc_sync_surface
    assert hooks_called_for(codex, "claude") == []
    assert codex.ecc_session_env("codex", launch()) == {}


def test_flags_and_folded_fields() -> None:
    profile = AgentProfile(
        model="gpt-5.4",
        allowed_tools=["Read"],
        permission_mode="plan",
        add_dirs=["docs", "specs"],
        max_budget_usd=1.25,
        token_budget=750,
        append_system_prompt="Review thoroughly.",
    )
    argv = codex.ecc_build_command("codex", launch(profile=profile))
    assert argv == [
        *HEAD,
        "--sandbox=read-only",
        "--cd=/tmp/repo",
        "--color=never",
        "--json",
        "--model=gpt-5.4",
        "--add-dir=docs",
        "--add-dir=specs",
        "--",
        "System instructions:\nReview thoroughly.\n\nECC execution profile:\n"
        "- Allowed tools: Read\n- Max budget USD: 1.25\n- Token budget: 750\n\n"
        "Task:\nreview this change",
    ]


@pytest.mark.parametrize(
    ("mode", "flag"),
    [
        ("plan", "--sandbox=read-only"),
        ("read-only", "--sandbox=read-only"),
        ("default", "--sandbox=workspace-write"),
        ("acceptEdits", "--sandbox=workspace-write"),
        ("danger-full-access", "--sandbox=danger-full-access"),
        ("bypassPermissions", "--dangerously-bypass-approvals-and-sandbox"),
    ],
)
def test_permission_mode_picks_the_sandbox(mode: str, flag: str) -> None:
    argv = codex.ecc_build_command("codex", launch(profile=AgentProfile(permission_mode=mode)))
    assert argv[3] == flag
    assert "Permission mode" not in argv[-1]  # enforced by the sandbox, not prose


def test_refusals() -> None:
    for profile, field in [
        (AgentProfile(disallowed_tools=["Bash"]), "disallowed_tools"),
        (AgentProfile(permission_mode="dontAsk"), "permission_mode"),
    ]:
        assert field in codex.ecc_translate_profile("codex", profile).refused
        with pytest.raises(EccError, match=field):
            codex.ecc_build_command("codex", launch(profile=profile))
        with pytest.raises(EccError, match=field):
            codex.ecc_resume_command("codex", launch(profile=profile), "thread")
    with pytest.raises(EccError, match="stdin"):
        codex.ecc_build_command("codex", launch(task="-"))


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values(value: str) -> None:
    profile = AgentProfile(model=value, add_dirs=[value], append_system_prompt=value)
    argv = codex.ecc_build_command("codex", launch(task=value, profile=profile))
    assert f"--model={value}" in argv
    assert f"--add-dir={value}" in argv
    assert argv[-2] == "--"
    assert argv[-1].endswith("Task:\n" + value)
    before = argv[: argv.index("--")]
    assert all(arg.startswith("--") for arg in before[2:])


def test_resume() -> None:
    profile = AgentProfile(model="m", add_dirs=["docs"])
    argv = codex.ecc_resume_command("codex", launch(task="-go on", profile=profile), "01a2-b")
    assert argv == [
        "codex",
        "exec",
        "resume",
        "--json",
        "--skip-git-repo-check",
        '--config=sandbox_mode="workspace-write"',
        "--model=m",
        '--config=sandbox_workspace_write.writable_roots=["/tmp/repo/docs"]',
        "--",
        "01a2-b",
        "-go on",
    ]
    bypass = AgentProfile(permission_mode="bypassPermissions")
    argv = codex.ecc_resume_command("codex", launch(profile=bypass), "t")
    assert "--dangerously-bypass-approvals-and-sandbox" in argv
    assert codex.ecc_resume_command("codex", launch(), None) == codex.ecc_build_command(
        "codex", launch()
    )


def test_detection(tmp_path: Path) -> None:
    assert codex.ecc_detect_harness(tmp_path) is None
    (tmp_path / ".codex").mkdir()
    assert codex.ecc_detect_harness(tmp_path) == "codex"


def parse_file(name: str):
    events = []
    for line in (SAMPLES / name).read_text().splitlines():
        events += codex.ecc_parse_output_line("codex", line, "stdout")
    return events


def test_recorded_stream() -> None:
    events = parse_file("stream.jsonl")
    assert [e.kind for e in events] == ["harness_session", "tool_call", "final", "usage"]
    assert events[0].data == {"id": "01a22a4c-5450-7b50-9060-a38254fd8334"}
    assert events[1].data["tool"] == "Bash"
    assert events[1].data["input"] == {"command": "echo hello > out.txt"}
    assert events[2].data == {"text": "STUB-FINAL: tool ran, done"}
    assert events[3].data == {
        "input_tokens": 240,
        "output_tokens": 60,
        "cost_usd": None,
        "cumulative": True,
    }


@pytest.mark.parametrize(
    ("shown", "command"),
    [
        ("/bin/bash -lc 'echo hello > out.txt'", "echo hello > out.txt"),
        ("/usr/bin/zsh -lc 'git push --force origin main'", "git push --force origin main"),
        ("sh -c 'a && b'", "a && b"),
        ("bash -lc 'it'\\''s'", "it's"),
        ("/bin/bash -lc 'a' extra", "/bin/bash -lc 'a' extra"),  # not a plain wrapper: as shown
        ("python -c 'print(1)'", "python -c 'print(1)'"),
        ("ls -la", "ls -la"),
        ("bash -lc 'unbalanced", "bash -lc 'unbalanced"),
    ],
)
def test_shell_wrapper_is_unwrapped_as_the_hook_sees_it(shown: str, command: str) -> None:
    # codex runs a shell call as `SHELL -lc SCRIPT` and shows that, while its hook gets SCRIPT:
    # the same, so the output's call and the hook's are recorded as one.
    line = {
        "type": "item.started",
        "item": {"id": "item_1", "type": "command_execution", "command": shown},
    }
    [event] = codex.ecc_parse_output_line("codex", json.dumps(line), "stdout")
    assert event.data["input"] == {"command": command}


def test_resumed_stream_reports_the_thread_total() -> None:
    usage = [e for e in parse_file("resume.jsonl") if e.kind == "usage"]
    assert usage[0].data["input_tokens"] == 360  # 240 of the first run + 120 now
    assert usage[0].data["cumulative"] is True


def test_other_items() -> None:
    lines = [
        {
            "type": "item.started",
            "item": {
                "id": "i",
                "type": "mcp_tool_call",
                "server": "s",
                "tool": "t",
                "arguments": {"a": 1},
            },
        },
        {
            "type": "item.completed",
            "item": {
                "id": "j",
                "type": "file_change",
                "changes": [{"path": "a.py", "kind": "add"}],
            },
        },
        {"type": "turn.failed", "error": {"message": "boom"}},
    ]
    events = [
        e
        for line in lines
        for e in codex.ecc_parse_output_line("codex", json.dumps(line), "stdout")
    ]
    assert [(e.kind, e.data.get("tool")) for e in events] == [
        ("tool_call", "mcp__s__t"),
        ("tool_call", "apply_patch"),
        ("error", None),
    ]
    assert events[2].data["message"] == "boom"


@pytest.mark.parametrize(
    "line",
    [
        "",
        "Reading additional input from stdin...",
        "{bad",
        "[]",
        '{"type":"item.completed"}',
        '{"type":"item.started","item":{"type":"command_execution","command":7}}',
        '{"type":"turn.completed","usage":[1]}',
        '{"type":"thread.started","thread_id":5}',
    ],
)
def test_malformed_lines_never_raise(line: str) -> None:
    assert isinstance(codex.ecc_parse_output_line("codex", line, "stdout"), list)


def test_registered_through_its_entry_point() -> None:
    hook = PluginSet(Config()).harness_hook("codex")
    assert hook.ecc_build_command(harness="codex", launch=launch())[:2] == ["codex", "exec"]
