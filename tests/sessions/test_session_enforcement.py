"""Enforcement owned by the session, with a fake ``claude`` on PATH that honours ``--settings``.

The fake does what Claude Code does with a ``PreToolUse`` command hook: it pipes the call's
payload into each hook command of the settings file it was given, and runs the shell command
only when every hook allowed it (exit 0); a hook's exit 2 denies it. The project's policy is in
an uncommitted ``.ecc/config.toml``, so the session's worktree (built from HEAD) never has it, and
``ecc hooks install`` is never run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ecc.store.open import open_store
from tests.conftest import ECC, git, run_ecc
from tests.sessions.conftest import store_target

FAKE_CLAUDE = r"""
import json, os, subprocess, sys
args = sys.argv[1:]
settings = [a.split("=", 1)[1] for a in args if a.startswith("--settings=")]
if os.path.exists(".claude/settings.json"):  # the project's settings, as Claude Code reads them
    settings.append(".claude/settings.json")
if os.environ.get("FAKE_IGNORE_HOOKS"):  # a harness that silently drops its hook settings
    settings = []
hooks = []
for path in settings:
    data = json.load(open(path))
    for entry in data.get("hooks", {}).get("PreToolUse", []):
        hooks += [h["command"] for h in entry["hooks"]]
command = os.environ["FAKE_TOOL_COMMAND"]
payload = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "tool_input": {"command": command}, "tool_use_id": "toolu_1",
                      "session_id": "fake-1", "cwd": os.getcwd()})
allowed, why = True, ""
imports = os.environ.get("FAKE_HOOK_IMPORTS")  # a file to list the modules each hook imported
hook_env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"} if imports else None
for hook in hooks:
    done = subprocess.run(
        hook, shell=True, input=payload, capture_output=True, text=True, env=hook_env
    )
    if done.returncode == 2:
        allowed, why = False, done.stderr
    if imports:
        with open(imports, "a") as listed:
            for line in done.stderr.splitlines():
                if line.startswith("import time:") and "|" in line:
                    listed.write(line.rsplit("|", 1)[1].strip() + "\n")
print(json.dumps({"type": "system", "subtype": "init", "session_id": "fake-1"}), flush=True)
print(json.dumps({"type": "assistant", "message": {"content": [{"type": "tool_use",
      "id": "toolu_1", "name": "Bash", "input": {"command": command}}]}}), flush=True)
if allowed:
    subprocess.run(command, shell=True)
answer = "ran it" if allowed else "denied: " + why
print(json.dumps({"type": "result", "subtype": "success", "is_error": False, "result": answer,
                  "session_id": "fake-1", "usage": {"input_tokens": 1, "output_tokens": 1}}))
"""


@pytest.fixture
def fake_claude(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "fake-bin"
    bin_dir.mkdir()
    program = bin_dir / "claude"
    program.write_text(f"#!{sys.executable}\n{FAKE_CLAUDE}")
    program.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def run(repo: Path, env: dict[str, str], command: str, *args: str) -> dict:
    done = run_ecc(
        "run", "--harness", "claude", "--json", *args, "--", "task",
        cwd=repo, env={**env, "FAKE_TOOL_COMMAND": command}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def tool_calls(session_id: str) -> list[dict]:
    with open_store(store_target()) as store:
        return store.list_tool_calls(session_id)


def test_an_uncommitted_policy_blocks_the_call_in_the_worktree(
    git_repo: Path, fake_claude: dict[str, str]
) -> None:
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    session = run(git_repo, fake_claude, "touch ran.txt && git push --force origin main")
    assert session["state"] == "completed"
    assert session["enforced"] is True
    worktree = Path(session["working_dir"])
    assert worktree != git_repo and not (worktree / ".ecc").exists()
    assert not (worktree / "ran.txt").exists(), "the blocked call ran"
    [call] = tool_calls(session["id"])
    assert (call["action"], call["decision"]) == ("block", "deny")
    shown = run_ecc("status", session["id"], cwd=git_repo).stdout
    assert "Enforced:    yes (ecc's hook, risk.enforce)" in shown


def test_without_enforcement_the_call_runs_and_is_still_scored(
    git_repo: Path, fake_claude: dict[str, str]
) -> None:
    session = run(git_repo, fake_claude, "touch ran.txt")
    assert session["enforced"] is False
    assert (Path(session["working_dir"]) / "ran.txt").exists()
    [call] = tool_calls(session["id"])
    assert call["decision"] == "allow" and call["score"] is not None


def test_the_sessions_hook_finds_ecc_s_directories_as_ecc_run_did_without_platformdirs(
    git_repo: Path, fake_claude: dict[str, str], tmp_path: Path
) -> None:
    """A user sets no ``ECC_*_DIR``: ``ecc run`` finds the directories (platformdirs, from the
    XDG variables) and hands them to the harness, so the hook before every tool call skips
    platformdirs' imports (about 20 ms a call) and records where ``ecc run`` looks."""
    pinned = {f"ECC_{kind}_DIR" for kind in ("CONFIG", "STATE", "DATA", "CACHE")}
    expected = {name: os.environ[name] for name in pinned}  # what the XDG variables lead to
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    listed, seen = tmp_path / "imports.txt", tmp_path / "env.json"
    dump = f"{sys.executable} -c 'import json, os; print(json.dumps(dict(os.environ)))' > {seen}"
    env = {k: v for k, v in os.environ.items() if k not in pinned}
    env.update(fake_claude, FAKE_HOOK_IMPORTS=str(listed), FAKE_TOOL_COMMAND=dump)
    done = subprocess.run(
        [*ECC, "run", "--harness", "claude", "--json", "--", "task"],
        cwd=git_repo, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    imported = set(listed.read_text().split())
    assert "ecc.observability.toolhook" in imported  # the hook ran, and was listed
    assert "platformdirs" not in imported
    harness_env = json.loads(seen.read_text())
    assert {name: harness_env.get(name) for name in pinned} == expected
    [call] = tool_calls(json.loads(done.stdout)["id"])  # the store in the XDG state directory
    assert call["decision"] == "allow" and call["source"] == "both"  # the hook's record too


def test_a_sessions_own_files_outlive_its_runs_until_it_is_removed(
    git_repo: Path, fake_claude: dict[str, str]
) -> None:
    """What a run leaves in the session's directory (the hook settings; Gemini CLI's private
    home with its chats) is what a resume or a follow-up needs: it stays after the runner has
    exited, and goes with ``ecc rm``."""
    import psutil

    from ecc.sessions.enforcement import session_directory
    from tests.sessions.conftest import wait_until

    session = run(git_repo, fake_claude, "ls")  # a clean worktree: ecc rm removes it

    def runner_gone() -> bool:  # ``ecc run-session --session-id ID`` has exited
        for process in psutil.process_iter(["cmdline"]):
            line = process.info["cmdline"] or []
            if "run-session" in line and session["id"] in line:
                return False
        return True

    wait_until(runner_gone, 30, "the runner to exit")
    kept = session_directory(session["id"])
    assert any(kept.iterdir()), "the run's files were discarded with its runner"
    removed = run_ecc("rm", session["id"], cwd=git_repo)
    assert removed.returncode == 0, removed.stderr
    assert not kept.parent.exists()


def test_a_committed_installed_hook_steps_aside_for_the_sessions_own(
    git_repo: Path, fake_claude: dict[str, str]
) -> None:
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    installed = run_ecc("hooks", "install", "--harness", "claude", "--project", cwd=git_repo)
    assert installed.returncode == 0, installed.stderr
    git(git_repo, "add", ".claude")
    git(git_repo, "commit", "-q", "-m", "ecc hooks")
    session = run(git_repo, fake_claude, "touch ran.txt && git push --force origin main")
    worktree = Path(session["working_dir"])
    assert (worktree / ".claude" / "settings.json").exists()  # both hooks ran in the fake
    assert not (worktree / "ran.txt").exists()
    [call] = tool_calls(session["id"])  # decided and recorded once
    assert (call["action"], call["decision"]) == ("block", "deny")


def test_run_warns_when_enforcement_is_on_and_the_harness_cannot_be_enforced(
    git_repo: Path, tmp_path: Path
) -> None:
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    user = tmp_path / "user.toml"
    user.write_text('[harness_runners.plain]\nprogram = "true"\n')
    done = run_ecc(
        "run", "--harness", "plain", "--json", "--", "task",
        cwd=git_repo, env={"ECC_CONFIG": str(user)}, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "cannot apply its hook to plain sessions" in done.stderr
    session = json.loads(done.stdout)
    assert session["enforced"] is False


def test_a_harness_that_never_ran_the_hook_is_recorded_as_not_enforced(
    git_repo: Path, fake_claude: dict[str, str]
) -> None:
    (git_repo / ".ecc").mkdir()
    (git_repo / ".ecc" / "config.toml").write_text("[risk]\nenforce = true\n")
    env = {**fake_claude, "FAKE_IGNORE_HOOKS": "1"}
    session = run(git_repo, env, "touch ran.txt && git push --force origin main")
    assert (Path(session["working_dir"]) / "ran.txt").exists()  # nothing stopped it
    shown = run_ecc("status", session["id"], "--json", cwd=git_repo)
    status = json.loads(shown.stdout)
    assert status["enforced"] is False
    [call] = status["tool_calls"]
    assert (call["source"], call["action"]) == ("output", "block")
    assert any("never ran ecc's hook" in e["reason"] for e in status["events"])
