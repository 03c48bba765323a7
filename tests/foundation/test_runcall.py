"""``ecc run -d``, ``ecc start`` and ``ecc run-session`` without click answer as click does."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ecc.cli.fast import run as runcall
from tests.conftest import ECC

THROUGH_CLICK = [
    sys.executable,
    "-c",
    "import sys; from ecc.cli.app import main; main(sys.argv[1:])",
]


def run(prefix: list[str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*prefix, *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=os.environ
    )


def masked(text: str) -> str:
    return re.sub(r"\b[0-9a-f]{12}\b", "<id>", text)


def wait_finished(session_id: str, cwd: Path) -> dict:
    deadline = time.monotonic() + 30
    while True:
        status = json.loads(run(ECC, "status", session_id, "--json", cwd=cwd).stdout)
        if status["state"] in ("completed", "failed") or time.monotonic() > deadline:
            return status
        time.sleep(0.05)


@pytest.mark.parametrize(
    "args",
    [
        ("run", "-d", "--no-worktree", "--harness", "shell", "true"),
        ("start", "--harness=shell", "--no-worktree", "--name", "label", "echo hi"),
        ("run", "--harness", "shell", "exit 3", "-d", "--worktree"),  # options after TASK
        ("run", "-d", "--harness", "nope", "true"),  # unknown harness: Error, exit 1
        ("start", "--harness", "shell", ""),  # empty task
        ("run", "-d", "--harness", "shell", "--executor", "nope", "true"),
        ("run", "-d", "--harness", "shell", "--profile", "missing", "true"),
        ("run", "-d", "--harness", "shell", "--cwd", "does/not/exist", "true"),
        ("run", "-d", "--harness", "shell", "--cwd", "README.md", "true"),  # click refuses
        ("start", "-d", "true"),  # start has no -d: click's usage error
        ("run", "-d", "--json=1", "true"),
        ("run", "-d", "--harness", "shell", "--harness", "shell", "true"),
        ("run", "-d", "--harness"),
        ("run", "-d", "a", "b"),
        ("run", "-d", "--help"),
    ],
)
def test_plain_form_matches_click(args: tuple[str, ...], git_repo: Path):
    fast = run(ECC, *args, cwd=git_repo)
    slow = run(THROUGH_CLICK, *args, cwd=git_repo)
    assert (fast.returncode, masked(fast.stdout), masked(fast.stderr)) == (
        slow.returncode,
        masked(slow.stdout),
        masked(slow.stderr),
    )
    params = runcall.parse_start(list(args))  # None: both went through click
    if fast.returncode == 0 and params is not None:
        task = params["task"]
        for result in (fast, slow):
            session_id = result.stdout.split()[-1]
            assert wait_finished(session_id, git_repo)["task"] == task


def test_plain_form_json_matches_click(git_repo: Path):
    args = ("run", "-d", "--json", "--harness", "shell", "--name", "n", "true")
    fast = json.loads(run(ECC, *args, cwd=git_repo).stdout)
    slow = json.loads(run(THROUGH_CLICK, *args, cwd=git_repo).stdout)
    moving = {"id", "created_at", "updated_at", "worktree_path", "worktree_branch"}
    assert {k: v for k, v in fast.items() if k not in moving} == {
        k: v for k, v in slow.items() if k not in moving
    }
    assert set(fast) == set(slow)


def test_a_closed_stdout_ends_quietly_with_status_1_as_with_click(git_repo: Path):
    results = []
    for prefix in (ECC, THROUGH_CLICK):
        read, write = os.pipe()
        os.close(read)  # the reader is gone before the id is printed
        try:
            done = subprocess.run(
                [*prefix, "run", "-d", "--no-worktree", "--harness", "shell", "true"],
                cwd=git_repo,
                stdout=write,
                stderr=subprocess.PIPE,
                text=True,
                timeout=60,
            )
        finally:
            os.close(write)
        results.append((done.returncode, done.stderr))
    assert results[0] == results[1] == (1, "")


def test_run_detached_imports_no_click_and_the_runner_neither(git_repo: Path):
    probe = (
        "import sys\n"
        "sys.argv = ['ecc'] + sys.argv[1:]\n"
        "from ecc.entry import main\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print('click' in sys.modules, 'pydantic' in sys.modules, file=sys.stderr)\n"
    )
    args = ("run", "-d", "--no-worktree", "--harness", "shell", "true")
    run(ECC, *args, cwd=git_repo)  # fills the config and plugin caches
    done = run([sys.executable, "-c", probe], *args, cwd=git_repo)
    assert done.returncode == 0, done.stderr
    assert done.stderr.split() == ["False", "False"]
    session_id = done.stdout.split()[-1]
    assert wait_finished(session_id, git_repo)["state"] == "completed"


@pytest.mark.parametrize(
    "args",
    [
        ["run", "true"],  # follows the session: click
        ["run", "-d", "--remote", "r", "true"],
        ["run", "-d", "--", "-x"],
        ["run", "-d", "-dd", "x"],
        ["run", "-d", "-d", "x"],
        ["run", "-d", "--name", "-x", "t"],
        ["start", "--detach", "x"],
        ["run", "-d", "--worktree=1", "x"],
        ["run", "-d"],
        ["run", "-d", "--cwd", "/etc/hostname", "x"],
        ["run", "-d", "--harness", "shell,shell", "x"],  # a group: ecc.cli.group_run
        ["start", "--harness=shell,codex", "x"],
        ["run", "-d", "--count", "2", "x"],
        ["start", "--check", "true", "x"],
        ["run", "-d", "--template", "t"],
        ["start", "--template", "t", "--var", "a=1"],
    ],
)
def test_anything_unusual_goes_to_click(args: list[str]):
    assert runcall.parse_start(args) is None


def test_parse_reads_both_option_forms(tmp_path: Path):
    params = runcall.parse_start(
        ["run", "--name=a b", "t", "--cwd", str(tmp_path), "-d", "--no-worktree", "--json"]
    )
    assert params == {
        "task": "t",
        "harness": None,
        "profile": None,
        "name": "a b",
        "executor": None,
        "cwd": tmp_path,
        "as_json": True,
        "use_worktree": False,
    }
    assert runcall.parse_start(["start", "-"])["task"] == "-"  # a lone dash is an argument


def test_run_session_plain_form_only():
    assert runcall.main(["run-session", "--session-id", "--remote"]) is None
    assert runcall.main(["run-session", "--remote", "--session-id", "x"]) is None
