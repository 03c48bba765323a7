"""The Gemini CLI adapter: argv, approval modes, refusals, resume, stream-json parsing."""

from __future__ import annotations

from pathlib import Path

import ecc_adapter_gemini as gemini
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config
from ecc.runtime.plugins.loader import PluginSet

SAMPLES = Path(__file__).parent / "samples"
TRICKY = ["two words", 'it\'s "quoted"', "line one\nline two", "-x", "--yolo"]
HEAD = ["gemini", "--output-format=stream-json", "--skip-trust"]


def launch(task: str = "investigate auth regression", profile: AgentProfile | None = None):
    return LaunchContext(
        session_id="sess-1234",
        task=task,
        working_dir=Path("/tmp/repo"),
        project_dir=Path("/tmp/repo"),
        config=Config(),
        profile=profile,
    )


def test_plain_command_has_the_prompt_last_as_one_element() -> None:
    argv = gemini.ecc_build_command("gemini", launch())
    assert argv == [*HEAD, "--prompt=investigate auth regression"]


def test_not_ours() -> None:
    every = hooks_called_for(gemini, "gemini")
    assert len(every) == 9  # ecc_sync_surface among them
    assert hooks_called_for(gemini, "codex") == []
    assert gemini.ecc_session_env("gemini", launch()) == {}


def test_flags_and_folded_fields() -> None:
    profile = AgentProfile(
        model="gemini-2.5-pro",
        allowed_tools=["Read"],
        permission_mode="plan",
        add_dirs=["docs", "../shared"],
        max_budget_usd=1.0,
        token_budget=500,
        append_system_prompt="Use repo context carefully.",
    )
    assert gemini.ecc_build_command("gemini", launch(profile=profile)) == [
        *HEAD,
        "--model=gemini-2.5-pro",
        "--include-directories=docs",
        "--include-directories=../shared",
        "--approval-mode=plan",
        "--prompt=System instructions:\nUse repo context carefully.\n\nECC execution profile:\n"
        "- Allowed tools: Read\n- Max budget USD: 1\n- Token budget: 500\n\n"
        "Task:\ninvestigate auth regression",
    ]


@pytest.mark.parametrize(
    ("mode", "native"),
    [
        ("default", "default"),
        ("acceptEdits", "auto_edit"),
        ("bypassPermissions", "yolo"),
        ("yolo", "yolo"),
        ("plan", "plan"),
    ],
)
def test_approval_modes(mode: str, native: str) -> None:
    argv = gemini.ecc_build_command("gemini", launch(profile=AgentProfile(permission_mode=mode)))
    assert f"--approval-mode={native}" in argv


def test_refusals() -> None:
    for profile, field in [
        (AgentProfile(disallowed_tools=["Bash"]), "disallowed_tools"),
        (AgentProfile(permission_mode="dontAsk"), "permission_mode"),
    ]:
        with pytest.raises(EccError, match=field):
            gemini.ecc_build_command("gemini", launch(profile=profile))


@pytest.mark.parametrize("value", TRICKY)
def test_tricky_values(value: str) -> None:
    profile = AgentProfile(model=value, add_dirs=[value])
    argv = gemini.ecc_build_command("gemini", launch(task=value, profile=profile))
    assert argv[-1] == f"--prompt={value}"
    assert f"--model={value}" in argv
    assert f"--include-directories={value}" in argv
    assert all(arg.startswith("--") for arg in argv[1:])


def test_resume() -> None:
    argv = gemini.ecc_resume_command("gemini", launch(task="go on"), "ec4eb334")
    assert argv == [*HEAD, "--resume=ec4eb334", "--prompt=go on"]
    assert gemini.ecc_resume_command("gemini", launch(), None) == gemini.ecc_build_command(
        "gemini", launch()
    )


def test_detection(tmp_path: Path) -> None:
    assert gemini.ecc_detect_harness(tmp_path) is None
    (tmp_path / "GEMINI.md").write_text("")
    assert gemini.ecc_detect_harness(tmp_path) == "gemini"


def test_recorded_stream() -> None:
    events = []
    for line in (SAMPLES / "stream.jsonl").read_text().splitlines():
        events += gemini.ecc_parse_output_line("gemini", line, "stdout")
    assert [e.kind for e in events] == ["harness_session", "tool_call", "final", "usage"]
    assert events[0].data == {"id": "8b5f5962-5798-4e22-b293-4695839b0a45"}
    assert events[1].data["tool"] == "run_shell_command"
    assert events[1].data["input"]["command"] == "echo hello > out.txt"
    assert events[2].data == {"text": "STUB-FINAL: tool ran, done", "delta": True}
    assert events[3].data == {
        "input_tokens": 240,
        "output_tokens": 60,
        "cost_usd": None,
        "cumulative": False,
    }


def test_failed_result() -> None:
    line = '{"type":"result","status":"error","error":{"message":"quota"},"stats":{}}'
    events = gemini.ecc_parse_output_line("gemini", line, "stdout")
    assert [e.kind for e in events] == ["usage", "error"]
    assert events[1].data == {"message": "quota"}


@pytest.mark.parametrize(
    "line",
    [
        "",
        "Ripgrep is not available.",
        "{",
        "null",
        '{"type":"tool_use","parameters":"x"}',
        '{"type":"result","stats":null}',
        '{"type":"message","role":"assistant","content":[]}',
    ],
)
def test_malformed_lines_never_raise(line: str) -> None:
    assert isinstance(gemini.ecc_parse_output_line("gemini", line, "stdout"), list)


def test_registered_through_its_entry_point() -> None:
    hook = PluginSet(Config()).harness_hook("gemini")
    assert hook.ecc_build_command(harness="gemini", launch=launch())[0] == "gemini"
