"""The OpenCode adapter: argv, permission flags, refusals, resume, JSON event parsing."""

from __future__ import annotations

from pathlib import Path

import ecc_adapter_opencode as opencode
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config
from ecc.runtime.plugins.loader import PluginSet

SAMPLES = Path(__file__).parent / "samples"
TRICKY = ["two words", 'it\'s "q"', "a\nb", "-x", "--auto", "double  space ", " lead\ttab"]
HEAD = ["opencode", "run", "--format=json", "--dir=/tmp/repo", "--title=ecc-sess-9999"]


def launch(task: str = "stabilize callback flow", profile: AgentProfile | None = None):
    return LaunchContext(
        session_id="sess-9999",
        task=task,
        working_dir=Path("/tmp/repo"),
        project_dir=Path("/tmp/repo"),
        config=Config(),
        profile=profile,
    )


def test_plain_command() -> None:
    assert opencode.ecc_build_command("opencode", launch()) == [
        *HEAD,
        "--",
        "stabilize",
        "callback",
        "flow",
    ]


def rejoined(argv: list[str]) -> str:
    """What opencode makes of the words after ``--``: quote words with spaces, join with one."""
    words = argv[argv.index("--") + 1 :]
    return " ".join(f'"{w}"' if " " in w else w for w in words)


def test_not_ours() -> None:
    every = hooks_called_for(opencode, "opencode")
    assert len(every) == 9  # + ecc_sync_surface
    assert hooks_called_for(opencode, "codex") == []


def test_spec_acceptance_profile() -> None:
    profile = AgentProfile(
        model="anthropic/claude-sonnet-4",
        add_dirs=["docs"],
        append_system_prompt="Build carefully.",
    )
    argv = opencode.ecc_build_command("opencode", launch(profile=profile))
    assert argv[len(HEAD) : argv.index("--")] == ["--model=anthropic/claude-sonnet-4"]
    assert rejoined(argv) == (
        "System instructions:\nBuild carefully.\n\nECC execution profile:\n"
        "- Additional context dirs: docs\n\nTask:\nstabilize callback flow"
    )


def test_every_field() -> None:
    profile = AgentProfile(
        model="m",
        allowed_tools=["Read", "Edit"],
        permission_mode="bypassPermissions",
        add_dirs=["a", "b"],
        max_budget_usd=2.5,
        token_budget=900,
        append_system_prompt="S",
    )
    argv = opencode.ecc_build_command("opencode", launch(profile=profile))
    assert argv[len(HEAD) : argv.index("--")] == ["--model=m", "--auto"]
    assert rejoined(argv) == (
        "System instructions:\nS\n\nECC execution profile:\n- Additional context dirs: a, b\n"
        "- Allowed tools: Read, Edit\n- Max budget USD: 2.5\n- Token budget: 900\n\n"
        "Task:\nstabilize callback flow"
    )


@pytest.mark.parametrize(
    ("mode", "flags"),
    [
        ("default", []),
        ("acceptEdits", []),
        ("bypassPermissions", ["--auto"]),
        ("plan", ["--agent=plan"]),
    ],
)
def test_permission_modes(mode: str, flags: list[str]) -> None:
    argv = opencode.ecc_build_command(
        "opencode", launch(profile=AgentProfile(permission_mode=mode))
    )
    assert argv[len(HEAD) : argv.index("--")] == flags


def test_refusals() -> None:
    for profile, field in [
        (AgentProfile(disallowed_tools=["Bash"]), "disallowed_tools"),
        (AgentProfile(permission_mode="dontAsk"), "permission_mode"),
    ]:
        with pytest.raises(EccError, match=field):
            opencode.ecc_build_command("opencode", launch(profile=profile))


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values(value: str) -> None:
    argv = opencode.ecc_build_command(
        "opencode", launch(task=value, profile=AgentProfile(model=value))
    )
    assert rejoined(argv) == value
    assert f"--model={value}" in argv
    assert argv.index("--") == len(HEAD) + 1


def test_resume_and_env() -> None:
    argv = opencode.ecc_resume_command("opencode", launch(task="go on"), "ses_abc")
    assert argv == [*HEAD, "--session=ses_abc", "--", "go", "on"]
    assert opencode.ecc_session_env("opencode", launch()) == {"OPENCODE_DISABLE_AUTOUPDATE": "1"}


def test_detection(tmp_path: Path) -> None:
    assert opencode.ecc_detect_harness(tmp_path) is None
    (tmp_path / "opencode.json").write_text("{}")
    assert opencode.ecc_detect_harness(tmp_path) == "opencode"


def test_recorded_stream() -> None:
    events = []
    for line in (SAMPLES / "stream.jsonl").read_text().splitlines():
        events += opencode.ecc_parse_output_line("opencode", line, "stdout")
    assert [e.kind for e in events] == [
        "harness_session",
        "tool_call",
        "usage",
        "harness_session",
        "final",
        "usage",
    ]
    assert events[0].data == {"id": "ses_dd5b38353ffeSS3Re5dydxCpsU"}
    assert events[1].data["tool"] == "bash"
    assert events[1].data["input"]["command"] == "echo hello > out.txt"
    assert events[2].data == {
        "input_tokens": 120,
        "output_tokens": 30,
        "cost_usd": 0.0,
        "cumulative": False,
    }
    assert events[4].data == {"text": "STUB-FINAL: tool ran, done"}


def test_error_line() -> None:
    line = '{"type":"error","error":{"name":"APIError","data":{"message":"rate limited"}}}'
    events = opencode.ecc_parse_output_line("opencode", line, "stdout")
    assert [(e.kind, e.data) for e in events] == [("error", {"message": "rate limited"})]


@pytest.mark.parametrize(
    "line",
    [
        "",
        "INFO log line",
        "{x",
        "1",
        '{"type":"tool_use","part":[]}',
        '{"type":"step_finish","part":{"tokens":{"input":"9"}}}',
        '{"type":"text","part":{}}',
    ],
)
def test_malformed_lines_never_raise(line: str) -> None:
    assert isinstance(opencode.ecc_parse_output_line("opencode", line, "stdout"), list)


def test_registered_through_its_entry_point() -> None:
    hook = PluginSet(Config()).harness_hook("opencode")
    assert hook.ecc_build_command(harness="opencode", launch=launch())[:2] == ["opencode", "run"]
