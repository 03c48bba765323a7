"""``ecc worktree diff``: colour and a pager on a terminal, plain text in a pipe, NO_COLOR."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.conftest import run_ecc
from tests.conventions.conftest import run_on_terminal, wait_finished

GREEN_ADDED = "\x1b[32m+added line"


@pytest.fixture
def changed_session(git_repo: Path, tmp_path: Path) -> tuple[str, Path]:
    started = run_ecc(
        "start", "--worktree", "--harness", "shell", "echo 'added line' >> README.md", cwd=git_repo
    )
    assert started.returncode == 0, started.stderr
    session_id = started.stdout.strip()
    assert wait_finished(session_id, git_repo)["state"] == "completed"
    pager = tmp_path / "pager"
    pager.write_text("#!/bin/sh\necho PAGED-BY-TEST\nexec cat\n")
    pager.chmod(pager.stat().st_mode | stat.S_IEXEC)
    return session_id, pager


def test_a_terminal_gets_colour_through_the_pager(changed_session: tuple[str, Path]):
    session_id, pager = changed_session
    status, text = run_on_terminal(
        "worktree", "diff", session_id, env={"PAGER": str(pager), "NO_COLOR": ""}
    )
    assert status == 0, text
    assert "PAGED-BY-TEST" in text
    assert GREEN_ADDED in text


def test_no_color_and_no_pager(changed_session: tuple[str, Path]):
    session_id, pager = changed_session
    status, text = run_on_terminal(
        "worktree", "diff", session_id, env={"PAGER": str(pager), "NO_COLOR": "1"}
    )
    assert status == 0, text
    assert "+added line" in text and "\x1b[" not in text
    status, text = run_on_terminal(
        "worktree", "diff", "--no-pager", session_id, env={"PAGER": str(pager)}
    )
    assert status == 0, text
    assert "PAGED-BY-TEST" not in text and GREEN_ADDED in text


def test_a_pipe_gets_plain_text(changed_session: tuple[str, Path]):
    session_id, pager = changed_session
    result = run_ecc("worktree", "diff", session_id, env={"PAGER": str(pager)})
    assert result.returncode == 0, result.stderr
    assert "+added line" in result.stdout
    assert "\x1b[" not in result.stdout and "PAGED-BY-TEST" not in result.stdout
