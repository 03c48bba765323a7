"""``ecc harness list`` and ``ecc harness command`` through the real CLI (subprocesses)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_ecc


def fake_cli(bin_dir: Path, name: str, version: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    script = bin_dir / name
    script.write_text(f'#!/bin/sh\n[ "$1" = --version ] && echo "{version}" && exit 0\nexit 3\n')
    script.chmod(0o755)


def test_list_reports_path_version_and_detection(tmp_path: Path) -> None:
    bins = tmp_path / "bin"
    fake_cli(bins, "claude", "9.9.9 (Claude Code)")
    project = tmp_path / "project"
    (project / ".gemini").mkdir(parents=True)
    env = {"PATH": f"{bins}{os.pathsep}/usr/bin{os.pathsep}/bin"}
    done = run_ecc("harness", "list", "--json", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)["harnesses"]}
    assert {"claude", "codex", "gemini", "opencode", "shell"} <= set(rows)
    assert rows["claude"]["on_path"] is True
    assert rows["claude"]["version"] == "9.9.9 (Claude Code)"
    assert rows["codex"]["on_path"] is False and rows["codex"]["version"] is None
    assert rows["gemini"]["detected"] is True and rows["claude"]["detected"] is False
    assert "structured_output" in rows["codex"]["capabilities"]
    assert "model" in rows["opencode"]["profile_fields"]
    text = run_ecc("harness", "list", "--no-version", cwd=project, env=env)
    assert text.returncode == 0
    assert any(
        line.startswith("gemini") and "detected" in line for line in text.stdout.splitlines()
    )


def test_command_shows_argv_and_env(tmp_path: Path) -> None:
    config = tmp_path / "ecc.toml"
    config.write_text(
        '[agent_profiles.careful]\nmodel = "opus"\npermission_mode = "plan"\n'
        '[agent_profiles.nodeny]\ndisallowed_tools = ["Bash"]\n'
    )
    done = run_ecc(
        "harness", "command", "--profile", "careful", "--json", "claude-code", "--", "-rf 'x'",
        cwd=tmp_path, env={"ECC_CONFIG": str(config)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout)
    assert shown["harness"] == "claude"
    assert shown["argv"][-2:] == ["--", "-rf 'x'"]
    assert "--model=opus" in shown["argv"] and "--permission-mode=plan" in shown["argv"]
    assert shown["env"]["ECC_HARNESS"] == "claude"
    assert shown["env"]["CLAUDE_MODEL"] == "opus"
    refused = run_ecc(
        "harness", "command", "codex", "t", "--profile", "nodeny",
        cwd=tmp_path, env={"ECC_CONFIG": str(config)},
    )  # fmt: skip
    assert refused.returncode == 1
    assert "disallowed_tools" in refused.stderr
    resumed = run_ecc("harness", "command", "opencode", "go", "--resume", "ses_1", cwd=tmp_path)
    assert resumed.returncode == 0
    assert "--session=ses_1" in resumed.stdout
    unknown = run_ecc("harness", "command", "nope", "t", cwd=tmp_path)
    assert unknown.returncode == 1 and "unknown harness" in unknown.stderr
