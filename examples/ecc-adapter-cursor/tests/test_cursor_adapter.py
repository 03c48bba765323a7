"""The example cursor adapter: argv, refusals, parsing, and a real ``ecc run --harness cursor``
against a stand-in ``cursor-agent`` script that prints stream-json like the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import ecc_adapter_cursor as cursor
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config


def launch(task: str = "fix it", profile: AgentProfile | None = None) -> LaunchContext:
    return LaunchContext("s1", task, Path("/r"), Path("/r"), Config(), profile)


@pytest.mark.parametrize("value", ["two words", "-x", "--force", "a\nb", 'it\'s "q"'])
def test_argv(value: str) -> None:
    profile = AgentProfile(model=value, permission_mode="bypassPermissions")
    argv = cursor.ecc_build_command("cursor", launch(value, profile))
    assert argv == [
        "cursor-agent", "--print", "--output-format=stream-json", f"--model={value}", "--force",
        "--", value,
    ]  # fmt: skip
    assert "--resume=abc" in cursor.ecc_resume_command("cursor", launch(), "abc")


def test_the_core_calls_it_for_cursor_only() -> None:
    every = hooks_called_for(cursor, "cursor")
    assert len(every) == 6  # with ecc_sync_surface
    assert hooks_called_for(cursor, "claude") == []


def test_refusals_and_folding() -> None:
    with pytest.raises(EccError, match="disallowed_tools"):
        cursor.ecc_build_command("cursor", launch(profile=AgentProfile(disallowed_tools=["x"])))
    with pytest.raises(EccError, match="permission_mode"):
        cursor.ecc_build_command("cursor", launch(profile=AgentProfile(permission_mode="plan")))
    argv = cursor.ecc_build_command("cursor", launch(profile=AgentProfile(token_budget=5)))
    assert argv[-1] == "ECC execution profile:\n- Token budget: 5\n\nTask:\nfix it"


STREAM = [
    {"type": "system", "subtype": "init", "session_id": "c-123", "model": "gpt-5"},
    {"type": "tool_call", "subtype": "started", "call_id": "1", "session_id": "c-123",
     "tool_call": {"shellToolCall": {"args": {"command": "echo hello > out.txt"}}}},
    {"type": "result", "subtype": "success", "is_error": False, "result": "done here",
     "session_id": "c-123", "usage": {"input_tokens": 7, "output_tokens": 3}},
]  # fmt: skip


def test_parse() -> None:
    events = [e for line in STREAM for e in cursor.parse_line(json.dumps(line))]
    assert [(e.kind, e.data.get("id") or e.data.get("tool") or e.data.get("text")) for e in events][
        :2
    ] == [("harness_session", "c-123"), ("tool_call", "shellToolCall")]
    assert events[2].data["input_tokens"] == 7
    assert events[3].data == {"text": "done here"}
    for junk in ["", "x", "{", '{"type":"tool_call","subtype":"started","tool_call":[]}']:
        assert cursor.parse_line(junk) == []


def test_ecc_run_with_a_stand_in_cursor_agent(tmp_path: Path) -> None:
    git_repo = tmp_path / "repo"
    git_repo.mkdir()
    for args in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "init"]):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=git_repo, check=True
        )
    bins = tmp_path / "bin"
    bins.mkdir()
    fake = bins / "cursor-agent"
    lines = "\n".join(json.dumps(line) for line in STREAM)
    fake.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\n"
        "assert sys.argv[-2] == '--', sys.argv\n"
        "pathlib.Path('out.txt').write_text(sys.argv[-1])\n"
        f"print({lines!r})\n"
    )
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bins}{os.pathsep}{os.environ['PATH']}"}
    env.pop("ECC_PLUGINS", None)
    for name in ("HOME", "ECC_CONFIG_DIR", "ECC_STATE_DIR", "ECC_DATA_DIR", "ECC_CACHE_DIR"):
        env[name] = str(tmp_path / name.lower())  # never the user's own ecc state
    done = subprocess.run(
        [sys.executable, "-m", "ecc", "run", "--harness", "cursor", "--json", "--", "-do it"],
        cwd=git_repo, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    session = json.loads(done.stdout)
    assert session["state"] == "completed"
    assert session["harness_session_id"] == "c-123"
    assert session["input_tokens"] == 7
    assert (Path(session["working_dir"]) / "out.txt").read_text() == "-do it"


# -- ecc sync: the shared rules as Cursor's project rules ------------------------------------


def test_rules_are_cursor_project_rules(tmp_path: Path) -> None:
    from ecc.contract.types import SyncRule, SyncSource

    rules = (
        SyncRule("style", "Use black.\n", "House style: black"),
        SyncRule("tests", "Every fix has a test.\n"),
    )
    plan = cursor.ecc_sync_surface("cursor", "rules", SyncSource(tmp_path, rules=rules))
    assert plan.mode == "translated"
    style, tests = plan.files
    assert style.path == tmp_path / ".cursor" / "rules" / "style.mdc"
    assert style.content == (
        '---\ndescription: "House style: black"\nalwaysApply: true\n---\nUse black.\n'
    )
    assert tests.content == "---\nalwaysApply: true\n---\nEvery fix has a test.\n"
    # AGENTS.md, the shared instructions, is what cursor-agent reads by itself
    assert any("AGENTS.md" in note for note in plan.notes)


def test_other_instructions_become_a_rule_and_the_rest_is_unsupported(tmp_path: Path) -> None:
    from ecc.contract.types import SyncSource

    shared = SyncSource(tmp_path, "Be kind.\n", tmp_path / "docs" / "agents.md")
    [file] = cursor.ecc_sync_surface("cursor", "rules", shared).files
    assert file.path.name == "ecc.instructions.mdc" and file.content is not None
    assert file.content.endswith("---\nBe kind.\n")
    for surface in ("commands", "hooks"):
        plan = cursor.ecc_sync_surface("cursor", surface, SyncSource(tmp_path))
        assert (plan.mode, plan.files) == ("unsupported", []) and plan.notes
    assert cursor.ecc_sync_surface("cursor", "skills", SyncSource(tmp_path)) is None
