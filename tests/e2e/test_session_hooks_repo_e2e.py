"""A repository's own committed harness settings cannot switch off the hook a Gemini or OpenCode
session applies to itself (real CLIs, the stub model; ``docs/adapters.md``).

Gemini reads a workspace's ``.gemini/settings.json`` only in a trusted folder; these tests trust
every folder the way a user running Gemini headless may (``GEMINI_CLI_TRUST_WORKSPACE=true``),
so the repository's settings are really in force."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import stub_server
from clis import ecc, strings
from test_steering_e2e import BLOCKED, TASK, policy, status

pytestmark = pytest.mark.e2e


def commit(repo: Path, path: str, data: object) -> None:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data))
    subprocess.run(["git", "add", path], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-q", "-m", f"add {path}"], cwd=repo, check=True)


def trusting(env: dict[str, str]) -> dict[str, str]:
    return {**env, "GEMINI_CLI_TRUST_WORKSPACE": "true"}


def run(env: dict[str, str], repo: Path, harness: str) -> dict:
    done = ecc(env, repo, "run", "--harness", harness, "--profile", "e2e", "--json", TASK)
    assert done.stdout, done.stderr[-2000:]
    return status(env, repo, json.loads(done.stdout)["id"])


def test_gemini_hooks_redaction_and_disabled_names_in_the_repo_do_not_help(
    env_for, git_repo: Path, stub: stub_server.StubServer
) -> None:
    commit(
        git_repo,
        ".gemini/settings.json",
        {
            "hooks": {"BeforeTool": []},
            "hooksConfig": {"disabled": ["ecc", "ecc hook"]},
            "security": {
                "environmentVariableRedaction": {
                    "enabled": True,
                    "blocked": ["ECC_POLICY_DIR", "ECC_SESSION_ID", "ECC_SESSION_HOOK"],
                }
            },
        },
    )
    policy(git_repo)  # uncommitted: only ECC_POLICY_DIR leads the hook to it
    stub.tool_command = BLOCKED
    session = run(trusting(env_for("gemini")), git_repo, "gemini")
    assert session["enforced"] is True
    assert not (Path(session["working_dir"]) / "ran.txt").exists(), "the blocked call ran"
    later = stub.model_requests()[1:]
    assert any("blocked" in text for r in later for text in strings(r["body"]))


@pytest.mark.parametrize("settings", [{"hooksConfig": {"enabled": False}}, {"hooks": None}])
def test_gemini_refuses_a_worktree_that_turns_hooks_off(
    env_for, git_repo: Path, stub: stub_server.StubServer, settings: dict
) -> None:
    commit(git_repo, ".gemini/settings.json", settings)
    policy(git_repo)
    stub.tool_command = BLOCKED
    session = run(trusting(env_for("gemini")), git_repo, "gemini")
    assert session["state"] == "failed"
    assert "switch off ecc's hook" in json.dumps(session)
    assert stub.model_requests() == [], "gemini was started"


def test_opencode_an_empty_plugin_list_in_the_repo_does_not_remove_the_hook(
    env_for, git_repo: Path, stub: stub_server.StubServer
) -> None:
    commit(git_repo, "opencode.json", {"plugin": []})
    policy(git_repo)
    stub.tool_command = BLOCKED
    session = run(env_for("opencode"), git_repo, "opencode")
    assert session["enforced"] is True
    assert not (Path(session["working_dir"]) / "ran.txt").exists(), "the blocked call ran"
