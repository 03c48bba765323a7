"""Config-defined runners (``[harness_runners.NAME]``) against the spec's acceptance cases."""

from __future__ import annotations

from pathlib import Path

import pytest

from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext
from ecc.runtime.config.model import AgentProfile, Config
from ecc.runtime.plugins.loader import PluginSet
from ecc.sessions import harnesses
from ecc_plugins import runners

PROMPT = "Use repo context carefully."


def launch(config: Config, task: str, profile: AgentProfile | None, sid: str = "sess-cur1"):
    return LaunchContext(
        session_id=sid,
        task=task,
        working_dir=Path("/tmp/repo"),
        project_dir=Path("/tmp/repo"),
        config=config,
        profile=profile,
    )


def cursor_config(**runner) -> Config:
    return Config(harness_runners={"cursor": {"program": "cursor-agent", **runner}})


def test_spec_full_cursor_runner() -> None:
    config = cursor_config(
        base_args=["run"],
        cwd_flag="--cwd",
        session_name_flag="--name",
        task_flag="--task",
        model_flag="--model",
        permission_mode_flag="--permission-mode",
        add_dir_flag="--context-dir",
        env={"ECC_HARNESS": "cursor"},
    )
    profile = AgentProfile(
        model="gpt-5.4",
        permission_mode="plan",
        add_dirs=["docs", "specs"],
        append_system_prompt=PROMPT,
    )
    argv = runners.ecc_build_command("cursor", launch(config, "fix callback regression", profile))
    assert argv == [
        "cursor-agent", "run", "--cwd", "/tmp/repo", "--name", "ecc-sess-cur1",
        "--model", "gpt-5.4", "--context-dir", "docs", "--context-dir", "specs",
        "--permission-mode", "plan", "--task",
        f"System instructions:\n{PROMPT}\n\nTask:\nfix callback regression",
    ]  # fmt: skip
    env = runners.ecc_session_env("cursor", launch(config, "x", None))
    assert env == {"ECC_HARNESS": "cursor"}


def test_spec_minimal_cursor_runner_folds_everything_else() -> None:
    config = cursor_config(base_args=["run"], task_flag="--task", model_flag="--model")
    profile = AgentProfile(
        model="gpt-5.4",
        allowed_tools=["Read"],
        disallowed_tools=["Bash"],
        permission_mode="plan",
        add_dirs=["docs", "specs"],
        max_budget_usd=2.5,
        token_budget=900,
        append_system_prompt=PROMPT,
    )
    argv = runners.ecc_build_command("cursor", launch(config, "fix callback regression", profile))
    assert argv == [
        "cursor-agent", "run", "--model", "gpt-5.4", "--task",
        f"System instructions:\n{PROMPT}\n\nECC execution profile:\n"
        "- Additional context dirs: docs, specs\n- Allowed tools: Read\n- Disallowed tools: Bash\n"
        "- Permission mode: plan\n- Max budget USD: 2.5\n- Token budget: 900\n\n"
        "Task:\nfix callback regression",
    ]  # fmt: skip


def test_every_flag_in_order_and_the_prompt_sent_once() -> None:
    config = cursor_config(
        include_directories_flag="--include",
        allowed_tools_flag="--allow",
        disallowed_tools_flag="--deny",
        max_budget_usd_flag="--budget",
        append_system_prompt_flag="--system",
        inline_system_prompt_for_task=False,
    )
    profile = AgentProfile(
        allowed_tools=["Read", "Edit"],
        disallowed_tools=["Bash"],
        add_dirs=["a", "b"],
        max_budget_usd=1.0,
        append_system_prompt=PROMPT,
    )
    argv = runners.ecc_build_command("cursor", launch(config, "task", profile))
    assert argv == [
        "cursor-agent", "--include", "a,b", "--allow", "Read,Edit", "--deny", "Bash",
        "--budget", "1", "--system", PROMPT, "task",
    ]  # fmt: skip
    # inline (the default) with a prompt flag: inlined only, not sent twice
    config = cursor_config(append_system_prompt_flag="--system")
    argv = runners.ecc_build_command("cursor", launch(config, "task", profile))
    assert "--system" not in argv
    assert argv[-1] == f"System instructions:\n{PROMPT}\n\nECC execution profile:\n" + (
        "- Additional context dirs: a, b\n- Allowed tools: Read, Edit\n- Disallowed tools: Bash\n"
        "- Max budget USD: 1\n\nTask:\ntask"
    )


def test_no_flag_injection() -> None:
    config = cursor_config(model_flag="--model")
    argv = runners.ecc_build_command("cursor", launch(config, "-rf everything", None))
    assert argv == ["cursor-agent", "--", "-rf everything"]
    with pytest.raises(EccError, match="starts with '-'"):
        runners.ecc_build_command("cursor", launch(config, "t", AgentProfile(model="--evil")))
    translation = runners.ecc_translate_profile(
        "cursor", AgentProfile(model="-x"), launch(config, "t", None)
    )
    assert "model" in translation.refused
    with_flag = cursor_config(task_flag="--task")
    with pytest.raises(EccError, match="task"):
        runners.ecc_build_command("cursor", launch(with_flag, "--help", None))
    # spaces, quotes and newlines are plain argv elements
    odd = "two words 'q' \"qq\"\nnext line"
    assert runners.ecc_build_command("cursor", launch(config, odd, None))[-1] == odd


def test_missing_program_and_resume() -> None:
    config = Config(harness_runners={"acme": {"base_args": ["x"]}})
    with pytest.raises(EccError, match="missing a program"):
        runners.ecc_build_command("acme", launch(config, "t", None))
    config = Config(harness_runners={"acme": {"program": "acme", "resume_flag": "--resume"}})
    assert runners.ecc_resume_command("acme", launch(config, "t", None), "abc") == [
        "acme", "--resume", "abc", "t",
    ]  # fmt: skip
    assert runners.ecc_resume_command("acme", launch(config, "t", None), None) == ["acme", "t"]
    assert runners.ecc_build_command("other", launch(config, "t", None)) is None


def test_detection_and_names(tmp_path: Path) -> None:
    config = Config(
        harness_runners={
            "acme-runner": {"program": "acme", "project_markers": [".acme", "/etc", "../x"]},
            "Windsurf": {"program": "windsurf", "project_markers": [".windsurf"]},
        }
    )
    assert runners.ecc_detect_harness(tmp_path, config) == []
    (tmp_path / ".acme").mkdir()
    (tmp_path / ".windsurf").mkdir()
    assert runners.ecc_detect_harness(tmp_path, config) == ["acme-runner", "windsurf"]
    names = [info.name for info in runners.ecc_harnesses(config)]
    assert names == ["acme-runner", "windsurf"]
    assert runners.ecc_build_command("windsurf", launch(config, "t", None)) == ["windsurf", "t"]


def test_runner_overrides_a_builtin_adapter_through_the_plugin_manager() -> None:
    runner = {"program": "my-claude", "base_args": ["-p"], "env": {"CLAUDE_MODEL": "pinned"}}
    config = Config(harness_runners={"claude": runner})
    hook = PluginSet(config).harness_hook("claude")  # both declare claude: both are called
    argv = hook.ecc_build_command(harness="claude", launch=launch(config, "t", None))
    assert argv == ["my-claude", "-p", "t"]
    envs = hook.ecc_session_env(harness="claude", launch=launch(config, "t", None))
    assert "CLAUDE_SESSION_ID" in envs[0] and envs[-1] == {"CLAUDE_MODEL": "pinned"}  # runner last
    assert "config_runner" in harnesses.available(config)["claude"].capabilities
