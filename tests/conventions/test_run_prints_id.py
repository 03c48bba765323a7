"""``ID=$(ecc run -d …)`` works: the bare id when stdout is not a terminal, a sentence on one."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from tests.conftest import run_ecc
from tests.conventions.conftest import run_on_terminal, wait_finished

SESSION_ID = re.compile(r"[0-9a-f]{12}")
THROUGH_CLICK = ["-c", "import sys; from ecc.cli.app import main; main(sys.argv[1:])"]


@pytest.mark.parametrize("command", [["run", "-d"], ["start"]])
def test_piped_start_prints_the_bare_id(command: list[str], git_repo: Path):
    result = run_ecc(*command, "--no-worktree", "--harness", "shell", "true", cwd=git_repo)
    assert result.returncode == 0, result.stderr
    session_id = result.stdout.strip()
    assert SESSION_ID.fullmatch(session_id), result.stdout
    assert wait_finished(session_id, git_repo)["state"] == "completed"


def test_click_form_prints_the_bare_id_too(git_repo: Path):
    import subprocess

    result = subprocess.run(
        [
            sys.executable,
            *THROUGH_CLICK,
            "run",
            "-d",
            "--no-worktree",
            "--harness",
            "shell",
            "true",
        ],
        cwd=git_repo,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert SESSION_ID.fullmatch(result.stdout.strip()), result.stdout
    wait_finished(result.stdout.strip(), git_repo)


def test_a_terminal_gets_the_sentence(git_repo: Path):
    status, text = run_on_terminal(
        "run", "-d", "--no-worktree", "--harness", "shell", "true", cwd=git_repo
    )
    assert status == 0, text
    match = re.fullmatch(r"Session started: ([0-9a-f]{12})\n", text)
    assert match, text
    wait_finished(match.group(1), git_repo)
