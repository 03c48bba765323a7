"""``ecc hooks install|uninstall`` on fresh, pre-existing and broken harness configs."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import run_ecc

# harness -> (project config path, event, matcher)
JSON_HARNESSES = {
    "claude": (".claude/settings.json", "PreToolUse", "*"),
    "codex": (".codex/hooks.json", "PreToolUse", "*"),
    "gemini": (".gemini/settings.json", "BeforeTool", ".*"),
}

USER_HOOK = {"type": "command", "command": "my-own-linter --strict"}


def install(repo: Path, harness: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_ecc("hooks", "install", "--harness", harness, *extra, cwd=repo)


def uninstall(repo: Path, harness: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_ecc("hooks", "uninstall", "--harness", harness, *extra, cwd=repo)


def ecc_entries(data: dict, event: str, harness: str) -> list[dict]:
    return [
        hook
        for group in data["hooks"][event]
        for hook in group["hooks"]
        if f"ecc hook --harness {harness}" in hook["command"]
    ]


@pytest.mark.parametrize("harness", sorted(JSON_HARNESSES))
def test_fresh_install_is_idempotent_and_uninstall_removes_the_file(
    git_repo: Path, harness: str
) -> None:
    relative, event, matcher = JSON_HARNESSES[harness]
    target = git_repo / relative
    done = install(git_repo, harness)
    assert done.returncode == 0, done.stderr
    data = json.loads(target.read_text())
    (entry,) = ecc_entries(data, event, harness)
    assert entry["type"] == "command"
    assert data["hooks"][event][0]["matcher"] == matcher
    first = target.read_bytes()
    again = install(git_repo, harness)
    assert again.returncode == 0
    assert "already up to date" in again.stdout
    assert target.read_bytes() == first
    gone = uninstall(git_repo, harness)
    assert gone.returncode == 0, gone.stderr
    assert not target.exists()


@pytest.mark.parametrize("harness", sorted(JSON_HARNESSES))
def test_existing_settings_and_hooks_are_kept(git_repo: Path, harness: str) -> None:
    relative, event, _ = JSON_HARNESSES[harness]
    target = git_repo / relative
    target.parent.mkdir(parents=True)
    original = {
        "model": "keep-me",
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            event: [{"matcher": "Bash", "hooks": [USER_HOOK]}],
            "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
        },
    }
    target.write_text(json.dumps(original, indent=4))
    assert install(git_repo, harness).returncode == 0
    data = json.loads(target.read_text())
    assert data["model"] == "keep-me"
    assert data["permissions"] == original["permissions"]
    assert data["hooks"]["Stop"] == original["hooks"]["Stop"]
    assert data["hooks"][event][0] == {"matcher": "Bash", "hooks": [USER_HOOK]}
    assert len(ecc_entries(data, event, harness)) == 1
    assert uninstall(git_repo, harness).returncode == 0
    assert json.loads(target.read_text()) == original


def test_user_hook_sharing_a_group_with_ecc_survives_uninstall(git_repo: Path) -> None:
    target = git_repo / ".claude/settings.json"
    assert install(git_repo, "claude").returncode == 0
    data = json.loads(target.read_text())
    data["hooks"]["PreToolUse"][0]["hooks"].append(USER_HOOK)  # the user edits ecc's group
    target.write_text(json.dumps(data))
    assert uninstall(git_repo, "claude").returncode == 0
    left = json.loads(target.read_text())
    assert left["hooks"]["PreToolUse"] == [{"matcher": "*", "hooks": [USER_HOOK]}]


def test_reinstall_replaces_a_stale_ecc_command(git_repo: Path) -> None:
    target = git_repo / ".claude/settings.json"
    target.parent.mkdir()
    stale = {"type": "command", "command": "/old/venv/bin/ecc hook --harness claude"}
    target.write_text(json.dumps({"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [stale]}]}}))
    assert install(git_repo, "claude").returncode == 0
    (entry,) = ecc_entries(json.loads(target.read_text()), "PreToolUse", "claude")
    assert "/old/venv" not in entry["command"]


@pytest.mark.parametrize("harness", sorted(JSON_HARNESSES))
def test_broken_config_is_refused_and_left_untouched(git_repo: Path, harness: str) -> None:
    relative, _, _ = JSON_HARNESSES[harness]
    target = git_repo / relative
    target.parent.mkdir(parents=True)
    target.write_text('{"hooks": {,}')
    for command in (install, uninstall):
        done = command(git_repo, harness)
        assert done.returncode == 1
        assert done.stderr.startswith("Error: ")
        assert str(target) in done.stderr and "not valid JSON" in done.stderr
        assert target.read_text() == '{"hooks": {,}'
    target.write_text("[1, 2]")
    assert install(git_repo, harness).returncode == 1
    assert target.read_text() == "[1, 2]"


def test_dry_run_shows_a_diff_and_writes_nothing(git_repo: Path) -> None:
    done = install(git_repo, "claude", "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "+++ " in done.stdout and "ecc hook --harness claude" in done.stdout
    assert not (git_repo / ".claude").exists()
    as_json = json.loads(install(git_repo, "codex", "--dry-run", "--json").stdout)
    assert as_json["dry_run"] is True and as_json["changed_files"]
    assert not (git_repo / ".codex").exists()


def test_user_scope_writes_the_harness_home_config(git_repo: Path, isolated_env: Path) -> None:
    assert install(git_repo, "claude", "--user").returncode == 0
    assert (isolated_env / ".claude/settings.json").is_file()
    assert not (git_repo / ".claude").exists()
    codex_home = isolated_env / "codex-home"
    done = run_ecc(
        "hooks",
        "install",
        "--harness",
        "codex",
        "--user",
        cwd=git_repo,
        env={"CODEX_HOME": str(codex_home)},
    )
    assert done.returncode == 0, done.stderr
    assert "trust" in done.stdout  # Codex runs new hooks only once trusted: say so
    assert (codex_home / "hooks.json").is_file()


def test_unknown_harness_is_a_clear_error(git_repo: Path) -> None:
    done = install(git_repo, "nosuch")
    assert done.returncode == 1
    assert "unknown harness 'nosuch'" in done.stderr


# -- OpenCode: a JS plugin module listed in opencode.json ------------------------------------


def test_opencode_plugin_module_and_config(git_repo: Path) -> None:
    config = git_repo / "opencode.json"
    config.write_text(json.dumps({"model": "x/y", "plugin": ["some-npm-plugin"]}))
    done = install(git_repo, "opencode")
    assert done.returncode == 0, done.stderr
    module = git_repo / ".opencode/ecc-hooks.js"
    text = module.read_text()
    # an asynchronous child process: a held call must not block OpenCode's event loop
    assert '"tool.execute.before"' in text and "spawn(" in text and "spawnSync" not in text
    data = json.loads(config.read_text())
    assert data["model"] == "x/y"
    assert data["plugin"] == ["some-npm-plugin", module.resolve().as_uri()]
    before = (config.read_bytes(), module.read_bytes())
    assert install(git_repo, "opencode").returncode == 0
    assert (config.read_bytes(), module.read_bytes()) == before
    assert uninstall(git_repo, "opencode").returncode == 0
    assert not module.exists()
    assert json.loads(config.read_text()) == {"model": "x/y", "plugin": ["some-npm-plugin"]}


def test_opencode_refuses_a_foreign_module_and_broken_config(git_repo: Path) -> None:
    module = git_repo / ".opencode/ecc-hooks.js"
    module.parent.mkdir()
    module.write_text("export const Mine = async () => ({})\n")
    done = install(git_repo, "opencode")
    assert done.returncode == 1 and "not written by ecc" in done.stderr
    assert module.read_text() == "export const Mine = async () => ({})\n"
    module.unlink()
    (git_repo / "opencode.json").write_text("{nope")
    done = install(git_repo, "opencode")
    assert done.returncode == 1 and "not valid JSON" in done.stderr
    assert not module.exists()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_opencode_module_is_valid_javascript(git_repo: Path) -> None:
    assert install(git_repo, "opencode").returncode == 0
    module = git_repo / ".opencode/ecc-hooks.js"
    check = subprocess.run(["node", "--check", str(module)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr


def test_a_project_install_says_when_ecc_is_not_on_path(git_repo: Path) -> None:
    """The project's file runs plain ``ecc`` (it is committed): without one on PATH the harness
    would not find it, and the install says so."""
    bare = run_ecc(
        "hooks", "install", "--harness", "claude", "--project",
        cwd=git_repo, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert bare.returncode == 0, bare.stderr
    assert "`ecc` is not on PATH" in bare.stderr
    settings = json.loads((git_repo / ".claude/settings.json").read_text())
    [entry] = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert entry["command"] == "ecc hook --harness claude"
