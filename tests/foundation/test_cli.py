"""The CLI shell: version, help, error format, doctor and completion."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from ecc import __version__
from tests.conftest import REPO, run_ecc


def test_version_both_paths():
    assert run_ecc("--version").stdout == f"ecc {__version__}\n"
    # Through click too (another option before it), same text.
    assert run_ecc("-c", "token_budget=1", "--version").stdout == f"ecc {__version__}\n"


def test_console_script_is_installed():
    script = REPO / ".venv" / "bin" / "ecc"
    result = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert result.stdout.strip() == f"ecc {__version__}"


def test_help_lists_commands_without_hidden_ones():
    result = run_ecc("--help")
    assert result.returncode == 0
    for name in ("config", "plugins", "doctor", "memory", "run", "sessions", "worktree"):
        assert f"  {name} " in result.stdout
    assert "run-session" not in result.stdout
    assert "  hook " not in result.stdout


def test_errors_are_one_line_on_stderr_with_exit_1():
    result = run_ecc("config", "get", "no.such.key")
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == "Error: unknown config key 'no.such.key'\n"


def test_error_messages_are_sanitised(tmp_path: Path):
    evil = tmp_path / "evil\x1b]0;pwned\x07.toml"
    result = run_ecc("config", "show", env={"ECC_CONFIG": str(evil)})
    assert result.returncode == 1
    assert "\x1b" not in result.stderr and "pwned" not in result.stderr
    assert "does not exist" in result.stderr


def test_usage_errors_exit_2():
    result = run_ecc("config", "frobnicate")
    assert result.returncode == 2
    assert "No such command 'frobnicate'" in result.stderr


def test_bad_override_is_reported():
    result = run_ecc("-c", "novalue", "config", "show")
    assert result.returncode == 1
    assert "must look like KEY=VALUE" in result.stderr


def test_doctor_reports_every_check(git_repo: Path):
    result = run_ecc("doctor", "--json", cwd=git_repo)
    assert result.returncode == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    names = [c["name"] for c in report["checks"]]
    assert names[:4] == ["git", "config", "plugins", "state dir"]
    assert "daemon" in names and "harness shell" in names
    assert Path(os.environ["ECC_STATE_DIR"]).is_dir()


def test_doctor_fails_on_invalid_config(git_repo: Path):
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("token_budget = -5\n")
    result = run_ecc("doctor", cwd=git_repo)
    assert result.returncode == 1
    assert "FAIL config" in result.stdout and "token_budget" in result.stdout


def test_completion_script_and_completions():
    script = run_ecc("completion", "bash")
    assert script.returncode == 0
    assert "_ECC_COMPLETE" in script.stdout and "complete " in script.stdout
    words = run_ecc(
        env={"_ECC_COMPLETE": "bash_complete", "COMP_WORDS": "ecc con", "COMP_CWORD": "1"}
    )
    assert "plain,config" in words.stdout.splitlines()
