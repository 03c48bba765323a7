"""``ecc mcp install|uninstall`` on fresh, pre-existing (other settings, comments) and broken
configuration files of every harness."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.conftest import run_ecc

SERVER = "ecc-memory"


def mcp(repo: Path, action: str, harness: str, *extra: str):
    return run_ecc("mcp", action, "--harness", harness, *extra, cwd=repo)


# harness -> (config file relative to the project, how to read the ecc entry from it)
def claude_entry(text: str) -> dict:
    return json.loads(text)["mcpServers"][SERVER]


def gemini_entry(text: str) -> dict:
    return json.loads(text)["mcpServers"][SERVER]


def opencode_entry(text: str) -> dict:
    return json.loads(text)["mcp"][SERVER]


def codex_entry(text: str) -> dict:
    return tomllib.loads(text)["mcp_servers"][SERVER]


PROJECT = {
    "claude": (".mcp.json", claude_entry),
    "codex": (".codex/config.toml", codex_entry),
    "gemini": (".gemini/settings.json", gemini_entry),
    "opencode": ("opencode.json", opencode_entry),
}
USER = {  # relative to HOME
    "claude": ".claude.json",
    "codex": ".codex/config.toml",
    "gemini": ".gemini/settings.json",
    "opencode": ".config/opencode/opencode.json",
}


def command_of(harness: str, entry: dict) -> list[str]:
    if harness == "opencode":
        return entry["command"]
    return [entry["command"], *entry["args"]]


def env_of(harness: str, entry: dict) -> dict:
    return entry["environment"] if harness == "opencode" else entry["env"]


@pytest.mark.parametrize("harness", sorted(PROJECT))
def test_fresh_install_is_idempotent_and_uninstall_removes_the_file(
    git_repo: Path, harness: str
) -> None:
    relative, read = PROJECT[harness]
    target = git_repo / relative
    done = mcp(git_repo, "install", harness)
    assert done.returncode == 0, done.stderr
    entry = read(target.read_text())
    assert env_of(harness, entry) == {"ECC_MEMORY_HARNESS": harness}
    argv = command_of(harness, entry)
    assert Path(argv[0]).is_absolute()
    assert argv[0].endswith("ecc-memory-mcp") or argv[-1] == "ecc.mcp.server"
    if harness == "opencode":
        assert entry["type"] == "local" and entry["enabled"] is True
    if harness == "claude":
        assert entry["type"] == "stdio"
    first = target.read_bytes()
    again = mcp(git_repo, "install", harness)
    assert again.returncode == 0, again.stderr
    assert "already up to date" in again.stdout
    assert target.read_bytes() == first
    gone = mcp(git_repo, "uninstall", harness)
    assert gone.returncode == 0, gone.stderr
    assert not target.exists()


PRE_EXISTING_JSON = {
    "claude": {"mcpServers": {"github": {"command": "gh-mcp", "args": ["--ro"]}}, "x": "é"},
    "gemini": {
        "general": {"disableAutoUpdate": True},
        "hooks": {
            "BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command", "command": "l"}]}]
        },
        "mcpServers": {"other": {"command": "other-mcp"}},
    },
    "opencode": {
        "$schema": "https://opencode.ai/config.json",
        "model": "anthropic/claude-sonnet-4-5",
        "mcp": {"playwright": {"type": "local", "command": ["npx", "pw"], "enabled": False}},
        "plugin": ["file:///opt/x.js"],
    },
}


@pytest.mark.parametrize("harness", sorted(PRE_EXISTING_JSON))
def test_pre_existing_json_keeps_every_other_setting_and_round_trips(
    git_repo: Path, harness: str
) -> None:
    relative, read = PROJECT[harness]
    target = git_repo / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    original = json.dumps(PRE_EXISTING_JSON[harness], indent=2, ensure_ascii=False) + "\n"
    target.write_text(original)
    done = mcp(git_repo, "install", harness)
    assert done.returncode == 0, done.stderr
    data = json.loads(target.read_text())
    container = "mcp" if harness == "opencode" else "mcpServers"
    others = {k: v for k, v in data[container].items() if k != SERVER}
    assert others == PRE_EXISTING_JSON[harness][container]
    assert {k: v for k, v in data.items() if k != container} == {
        k: v for k, v in PRE_EXISTING_JSON[harness].items() if k != container
    }
    assert env_of(harness, read(target.read_text()))["ECC_MEMORY_HARNESS"] == harness
    assert mcp(git_repo, "uninstall", harness).returncode == 0
    assert target.read_text() == original


CODEX_TOML = """\
# my codex settings: keep these comments
model = "o3"  # the model I like
approval_policy = "on-request"

[mcp_servers.github]
# the GitHub server
command = "gh-mcp"
args = ["--read-only"]

[profiles.fast]
model = "o4-mini"
"""


def test_codex_toml_keeps_comments_and_other_keys_and_round_trips_byte_for_byte(
    git_repo: Path, isolated_env: Path
) -> None:
    target = isolated_env / ".codex" / "config.toml"
    target.parent.mkdir()
    target.write_text(CODEX_TOML)
    done = mcp(git_repo, "install", "codex", "--scope", "user")
    assert done.returncode == 0, done.stderr
    text = target.read_text()
    # every line the user wrote is still there, unchanged and in order; ecc's table sits with
    # the other MCP servers and is followed by a blank line
    lines = iter(text.splitlines())
    assert all(line in lines for line in CODEX_TOML.splitlines())
    assert '[mcp_servers.ecc-memory]\ncommand = "' in text
    assert '= "codex"}\n\n[profiles.fast]' in text
    parsed = tomllib.loads(text)
    assert parsed["mcp_servers"]["github"] == {"command": "gh-mcp", "args": ["--read-only"]}
    assert parsed["mcp_servers"][SERVER]["env"] == {"ECC_MEMORY_HARNESS": "codex"}
    assert parsed["profiles"]["fast"]["model"] == "o4-mini"
    again = mcp(git_repo, "install", "codex", "--scope", "user")
    assert "already up to date" in again.stdout
    assert target.read_text() == text
    assert mcp(git_repo, "uninstall", "codex", "--scope", "user").returncode == 0
    assert target.read_text() == CODEX_TOML


def test_codex_home_is_honoured(git_repo: Path, tmp_path: Path) -> None:
    codex_home = tmp_path / "codex-home"
    done = run_ecc(
        "mcp", "install", "--harness", "codex", "--scope", "user",
        cwd=git_repo, env={"CODEX_HOME": str(codex_home)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert codex_entry((codex_home / "config.toml").read_text())["command"]


def test_claude_user_scope_edits_claude_json_and_keeps_its_state(
    git_repo: Path, isolated_env: Path
) -> None:
    target = isolated_env / ".claude.json"
    state = {"numStartups": 7, "projects": {"/x": {"allowedTools": []}}, "userID": "abc"}
    target.write_text(json.dumps(state))
    target.chmod(0o600)
    done = mcp(git_repo, "install", "claude", "--scope", "user")
    assert done.returncode == 0, done.stderr
    data = json.loads(target.read_text())
    assert {k: v for k, v in data.items() if k != "mcpServers"} == state
    assert data["mcpServers"][SERVER]["env"] == {"ECC_MEMORY_HARNESS": "claude"}
    assert target.stat().st_mode & 0o777 == 0o600
    assert not (git_repo / ".mcp.json").exists()
    assert mcp(git_repo, "uninstall", "claude", "--scope", "user").returncode == 0
    assert json.loads(target.read_text()) == state


@pytest.mark.parametrize("harness", ["gemini", "opencode"])
def test_user_scope_locations(git_repo: Path, isolated_env: Path, harness: str) -> None:
    done = mcp(git_repo, "install", harness, "--scope", "user", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["location"] == str(isolated_env / USER[harness])
    assert payload["changed_files"] == [payload["location"]]
    assert env_of(harness, PROJECT[harness][1](Path(payload["location"]).read_text()))


BROKEN = {
    "claude": '{"mcpServers": {',
    "codex": 'model = "o3"\n[mcp_servers\n',
    "gemini": "{ // comments are fine (JSONC), an unclosed object is not\n",
    "opencode": "[1, 2]",
}


@pytest.mark.parametrize("harness", sorted(BROKEN))
def test_a_broken_file_is_a_clear_error_and_stays_untouched(git_repo: Path, harness: str) -> None:
    target = git_repo / PROJECT[harness][0]
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(BROKEN[harness])
    for action in ("install", "uninstall"):
        done = mcp(git_repo, action, harness)
        assert done.returncode == 1
        assert done.stderr.startswith("Error: ")
        assert str(target) in done.stderr
        assert "nothing was changed" in done.stderr
        assert target.read_text() == BROKEN[harness]


def test_a_servers_container_of_the_wrong_type_is_refused(git_repo: Path) -> None:
    target = git_repo / ".mcp.json"
    target.write_text('{"mcpServers": ["not", "an", "object"]}')
    done = mcp(git_repo, "install", "claude")
    assert done.returncode == 1
    assert '"mcpServers"' in done.stderr and "not a JSON object" in done.stderr
    assert target.read_text() == '{"mcpServers": ["not", "an", "object"]}'


def test_opencode_jsonc_is_not_edited(git_repo: Path) -> None:
    jsonc = git_repo / "opencode.jsonc"
    jsonc.write_text("{\n  // mine\n}\n")
    done = mcp(git_repo, "install", "opencode")
    assert done.returncode == 1
    assert "JSONC" in done.stderr and '"ecc-memory"' in done.stderr
    assert jsonc.read_text() == "{\n  // mine\n}\n"
    assert not (git_repo / "opencode.json").exists()


def test_dry_run_shows_a_diff_and_writes_nothing(git_repo: Path) -> None:
    target = git_repo / ".gemini" / "settings.json"
    target.parent.mkdir()
    target.write_text('{\n  "general": {\n    "vimMode": true\n  }\n}\n')
    done = mcp(git_repo, "install", "gemini", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert f"--- {target}" in done.stdout and f"+++ {target}" in done.stdout
    assert '+  "mcpServers": {' in done.stdout
    assert '+        "ECC_MEMORY_HARNESS": "gemini"' in done.stdout
    assert "(dry run) 1 file(s) would change" in done.stdout
    assert target.read_text() == '{\n  "general": {\n    "vimMode": true\n  }\n}\n'


def test_a_stale_entry_is_replaced_not_duplicated(git_repo: Path) -> None:
    target = git_repo / ".mcp.json"
    target.write_text(json.dumps({"mcpServers": {SERVER: {"command": "/old/ecc-memory-mcp"}}}))
    done = mcp(git_repo, "install", "claude")
    assert done.returncode == 0, done.stderr
    servers = json.loads(target.read_text())["mcpServers"]
    assert list(servers) == [SERVER]
    assert servers[SERVER]["command"] != "/old/ecc-memory-mcp"
    assert servers[SERVER]["env"] == {"ECC_MEMORY_HARNESS": "claude"}


def test_unknown_and_unsupported_harnesses(git_repo: Path) -> None:
    unknown = mcp(git_repo, "install", "nope")
    assert unknown.returncode == 1 and "unknown harness 'nope'" in unknown.stderr
    shell = mcp(git_repo, "install", "shell")
    assert shell.returncode == 1
    assert "no installed adapter can install an MCP server for harness 'shell'" in shell.stderr
