"""Skills and MCP registration seen by the real CLIs (``make e2e``; loopback only).

After ``ecc mcp install --harness NAME`` each CLI's own ``mcp list`` shows the ``ecc-memory``
server (and, where the CLI checks it, connects to it: the real ``ecc-memory-mcp`` starts with
``ECC_MEMORY_HARNESS`` set); after ``ecc skills install`` each CLI lists or loads the skill:
``gemini skills list``, ``opencode debug skill``, ``codex debug prompt-input`` and, for Claude
Code, which has no listing command, the skill's name and description in the request it sends to
the (stub) model. After the uninstall the CLIs no longer see them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import clis
import pytest

pytestmark = pytest.mark.e2e
TIMEOUT = 240
DESCRIPTION = "Tidy the repository zebracorn-marker before a commit. Use when asked to tidy."
SKILL = f"""---
name: tidy-up
description: {DESCRIPTION}
origin: ECC
---
# Tidy up

Run `make format` from the repository root, then `git status`.
"""


@pytest.fixture
def repo(git_repo: Path) -> Path:
    skill = git_repo / "skills" / "tidy-up"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return git_repo


def harness_env(harness: str, tmp_path: Path, url: str, bins: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k.startswith(("ECC_", "GIT_"))}
    env.pop("ECC_PLUGINS", None)
    env.update(clis.prepare(harness, tmp_path / "harness-home", url, bins))
    return env


def ecc(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "ecc", *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


def cli(env: dict[str, str], cwd: Path, *argv: str) -> str:
    done = subprocess.run(
        list(argv), cwd=cwd, env=env, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, timeout=TIMEOUT,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout + done.stderr


def server_line(output: str) -> str:
    lines = [line for line in output.splitlines() if "ecc-memory" in line]
    assert len(lines) == 1, output
    return lines[0]


def trust_gemini_folder(env: dict[str, str], folder: Path) -> None:
    trusted = Path(env["HOME"]) / ".gemini" / "trustedFolders.json"
    trusted.write_text(json.dumps({str(folder): "TRUST_FOLDER"}))


# -- MCP --------------------------------------------------------------------------------------


@pytest.mark.parametrize("scope", ["user", "project"])
def test_claude_mcp_list_shows_the_ecc_server(
    repo: Path, tmp_path: Path, cli_bin: Path, scope: str
) -> None:
    env = harness_env("claude", tmp_path, "http://127.0.0.1:9", cli_bin)
    ecc(env, repo, "mcp", "install", "--harness", "claude", "--scope", scope)
    line = server_line(cli(env, repo, "claude", "mcp", "list"))
    again = ecc(env, repo, "mcp", "install", "--harness", "claude", "--scope", scope, "--json")
    command = json.loads(again)
    assert command["changed_files"] == []  # idempotent
    assert line.startswith(f"ecc-memory: {command['command'][0]}")
    if scope == "user":
        assert "Connected" in line  # Claude Code started ecc-memory-mcp and it answered
    else:
        assert "Pending approval" in line  # a project's .mcp.json waits for the user's yes
        settings = repo / ".claude" / "settings.local.json"
        settings.parent.mkdir(exist_ok=True)
        settings.write_text(json.dumps({"enabledMcpjsonServers": ["ecc-memory"]}))
        assert "Connected" in server_line(cli(env, repo, "claude", "mcp", "list"))
    ecc(env, repo, "mcp", "uninstall", "--harness", "claude", "--scope", scope)
    assert "ecc-memory" not in cli(env, repo, "claude", "mcp", "list")


@pytest.mark.parametrize("scope", ["user", "project"])
def test_gemini_mcp_list_shows_the_ecc_server_connected(
    repo: Path, tmp_path: Path, cli_bin: Path, scope: str
) -> None:
    env = harness_env("gemini", tmp_path, "http://127.0.0.1:9", cli_bin)
    ecc(env, repo, "mcp", "install", "--harness", "gemini", "--scope", scope)
    untrusted = server_line(cli(env, repo, "gemini", "mcp", "list"))
    assert "Disabled" in untrusted  # Gemini lists it, but starts nothing in an untrusted folder
    trust_gemini_folder(env, repo)
    line = server_line(cli(env, repo, "gemini", "mcp", "list"))
    assert "ecc-memory-mcp" in line or "ecc.mcp.server" in line
    assert "Connected" in line
    ecc(env, repo, "mcp", "uninstall", "--harness", "gemini", "--scope", scope)
    assert "ecc-memory" not in cli(env, repo, "gemini", "mcp", "list")


def test_codex_mcp_list_shows_the_ecc_server(repo: Path, tmp_path: Path, cli_bin: Path) -> None:
    env = harness_env("codex", tmp_path, "http://127.0.0.1:9", cli_bin)
    config = Path(env["CODEX_HOME"]) / "config.toml"
    before = config.read_text()
    ecc(env, repo, "mcp", "install", "--harness", "codex", "--scope", "user")
    line = server_line(cli(env, repo, "codex", "mcp", "list"))
    assert "ECC_MEMORY_HARNESS" in line and "enabled" in line
    ecc(env, repo, "mcp", "uninstall", "--harness", "codex", "--scope", "user")
    assert "ecc-memory" not in cli(env, repo, "codex", "mcp", "list")
    assert config.read_text() == before  # the stub provider settings came through untouched


def test_opencode_mcp_list_shows_the_ecc_server_connected(
    repo: Path, tmp_path: Path, cli_bin: Path
) -> None:
    env = harness_env("opencode", tmp_path, "http://127.0.0.1:9", cli_bin)
    ecc(env, repo, "mcp", "install", "--harness", "opencode", "--scope", "project")
    output = cli(env, repo, "opencode", "mcp", "list")
    assert "ecc-memory" in output and "connected" in output
    ecc(env, repo, "mcp", "uninstall", "--harness", "opencode", "--scope", "project")
    assert "ecc-memory" not in cli(env, repo, "opencode", "mcp", "list")


# -- skills -----------------------------------------------------------------------------------


def test_gemini_skills_list_shows_the_installed_skill(
    repo: Path, tmp_path: Path, cli_bin: Path
) -> None:
    env = harness_env("gemini", tmp_path, "http://127.0.0.1:9", cli_bin)
    trust_gemini_folder(env, repo)
    for scope, where in (("user", Path(env["HOME"]) / ".gemini"), ("project", repo / ".gemini")):
        ecc(env, repo, "skills", "install", "--harness", "gemini", "--scope", scope)
        output = cli(env, repo, "gemini", "skills", "list")
        assert "tidy-up [Enabled]" in output
        assert f"Description: {DESCRIPTION}" in output
        assert f"Location:    {where / 'skills' / 'tidy-up' / 'SKILL.md'}" in output
        ecc(env, repo, "skills", "uninstall", "--harness", "gemini", "--scope", scope)
        assert "tidy-up" not in cli(env, repo, "gemini", "skills", "list")


def test_opencode_lists_the_installed_skill(repo: Path, tmp_path: Path, cli_bin: Path) -> None:
    env = harness_env("opencode", tmp_path, "http://127.0.0.1:9", cli_bin)
    for scope, where in (
        ("project", repo / ".opencode"),
        ("user", Path(env["XDG_CONFIG_HOME"]) / "opencode"),
    ):
        ecc(env, repo, "skills", "install", "--harness", "opencode", "--scope", scope)
        output = cli(env, repo, "opencode", "debug", "skill")
        listed = json.loads(output[output.index("[") :])
        (ours,) = [s for s in listed if s["name"] == "tidy-up"]
        assert ours["description"] == DESCRIPTION
        assert ours["location"] == str(where / "skills" / "tidy-up" / "SKILL.md")
        ecc(env, repo, "skills", "uninstall", "--harness", "opencode", "--scope", scope)
        assert '"tidy-up"' not in cli(env, repo, "opencode", "debug", "skill")


def test_codex_puts_the_installed_skill_in_its_prompt(
    repo: Path, tmp_path: Path, cli_bin: Path
) -> None:
    env = harness_env("codex", tmp_path, "http://127.0.0.1:9", cli_bin)
    ecc(env, repo, "skills", "install", "--harness", "codex", "--scope", "user")
    prompt = cli(env, repo, "codex", "debug", "prompt-input")
    assert f"tidy-up: {DESCRIPTION}" in prompt
    ecc(env, repo, "skills", "uninstall", "--harness", "codex", "--scope", "user")
    assert "tidy-up" not in cli(env, repo, "codex", "debug", "prompt-input")


@pytest.mark.parametrize("scope", ["project", "user"])
def test_claude_loads_the_installed_skill_into_its_model_request(
    repo: Path, tmp_path: Path, cli_bin: Path, stub, scope: str
) -> None:
    env = harness_env("claude", tmp_path, stub.url, cli_bin)
    ecc(env, repo, "skills", "install", "--harness", "claude", "--scope", scope)
    cli(
        env, repo, "claude", "-p", "say hi", "--model", "claude-sonnet-4-5",
        "--dangerously-skip-permissions",
    )  # fmt: skip
    first = json.dumps(stub.model_requests()[0]["body"])
    assert "tidy-up" in first
    assert DESCRIPTION in first
    ecc(env, repo, "skills", "uninstall", "--harness", "claude", "--scope", scope)
    before = len(stub.model_requests())
    cli(
        env, repo, "claude", "-p", "say hi", "--model", "claude-sonnet-4-5",
        "--dangerously-skip-permissions",
    )  # fmt: skip
    assert DESCRIPTION not in json.dumps(stub.model_requests()[before]["body"])
