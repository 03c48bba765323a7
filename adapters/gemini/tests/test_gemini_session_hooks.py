"""A managed Gemini session's own hook: the private GEMINI_CLI_HOME, its settings, the refusals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import ecc_adapter_gemini as gemini
import pytest

from ecc.contract.errors import EccError
from ecc.contract.types import LaunchContext, SessionEnforcement
from ecc.runtime.config.model import Config

COMMAND = "/opt/ecc/bin/ecc hook --harness gemini --managed"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The user's real home, with a ``~/.gemini`` holding settings and credentials."""
    real = tmp_path / "home"
    (real / ".gemini" / "tmp").mkdir(parents=True)
    (real / ".gemini" / "oauth_creds.json").write_text("{}")
    (real / ".gemini" / "settings.json").write_text(
        "// the user's own\n"
        '{"security": {"auth": {"selectedType": "gemini-api-key"}},\n'
        ' /* theirs */ "hooks": {"BeforeTool": [{"matcher": "x", "hooks": [{"type": "command",'
        ' "command": "their-hook // not a comment"}]}]}}\n'
    )
    (real / ".env").write_text("GEMINI_API_KEY=k\n")
    monkeypatch.setenv("HOME", str(real))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(tmp_path / "no-system.json"))
    monkeypatch.setenv("ECC_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.delenv("ECC_DATA_DIR", raising=False)
    return real


def launch(tmp_path: Path, enforced: bool = True) -> LaunchContext:
    worktree = tmp_path / "worktree"
    worktree.mkdir(exist_ok=True)
    directory = tmp_path / "session-hooks"
    directory.mkdir(mode=0o700, exist_ok=True)
    enforcement = SessionEnforcement(
        command=COMMAND,
        argv=tuple(COMMAND.split()),
        timeout_secs=630,
        directory=directory,
    )
    return LaunchContext(
        session_id="sess-1234",
        task="t",
        working_dir=worktree,
        project_dir=worktree,
        config=Config(),
        enforcement=enforcement if enforced else None,
    )


def test_the_capability_is_declared() -> None:
    assert "session_hooks" in gemini.ecc_harnesses().capabilities


def test_an_enforced_session_gets_a_private_home_with_the_hook_after_the_users_own(
    tmp_path: Path, home: Path
) -> None:
    original = (home / ".gemini" / "settings.json").read_text()
    env = gemini.ecc_session_env("gemini", launch(tmp_path))
    private = tmp_path / "session-hooks" / "gemini-home"
    assert env == {"GEMINI_CLI_HOME": str(private)}
    settings_file = private / ".gemini" / "settings.json"
    assert settings_file.stat().st_mode & 0o077 == 0
    settings = json.loads(settings_file.read_text())
    assert settings["security"] == {"auth": {"selectedType": "gemini-api-key"}}  # theirs kept
    assert settings["hooksConfig"]["enabled"] is True
    theirs, ours = settings["hooks"]["BeforeTool"]
    assert theirs["hooks"][0]["command"] == "their-hook // not a comment"
    assert ours["matcher"] == ".*"
    [hook] = ours["hooks"]
    assert hook["type"] == "command" and hook["command"] == COMMAND
    assert hook["timeout"] == 630_000  # ms
    assert hook["name"].startswith("ecc-session-") and len(hook["name"]) > len("ecc-session-")
    # Expanded by Gemini from its own environment: present whatever its redaction strips.
    assert hook["env"]["ECC_SESSION_ID"] == "${ECC_SESSION_ID:-}"
    assert hook["env"]["ECC_POLICY_DIR"] == "${ECC_POLICY_DIR:-}"
    assert hook["env"]["ECC_STATE_DIR"] == "${ECC_STATE_DIR:-}"
    assert "ECC_DATA_DIR" not in hook["env"]  # not set: not named
    # The user's other files are the real ones.
    for name in ("tmp", "oauth_creds.json"):
        link = private / ".gemini" / name
        assert link.is_symlink() and os.readlink(link) == str(home / ".gemini" / name)
    assert os.readlink(private / ".env") == str(home / ".env")
    assert (home / ".gemini" / "settings.json").read_text() == original  # untouched


def test_a_second_launch_rewrites_the_settings_and_keeps_what_gemini_created(
    tmp_path: Path, home: Path
) -> None:
    ctx = launch(tmp_path)
    gemini.ecc_session_env("gemini", ctx)
    private = tmp_path / "session-hooks" / "gemini-home" / ".gemini"
    (private / "projects.json").write_text('{"mine": 1}')  # written by gemini in the first run
    (home / ".gemini" / "history").mkdir()
    first = json.loads((private / "settings.json").read_text())
    gemini.ecc_session_env("gemini", ctx)
    again = json.loads((private / "settings.json").read_text())
    assert len(again["hooks"]["BeforeTool"]) == 2  # not appended twice
    assert first["hooks"]["BeforeTool"][1]["hooks"][0]["command"] == COMMAND
    assert (private / "projects.json").read_text() == '{"mine": 1}'
    assert (private / "history").is_symlink()


def test_without_a_user_settings_file_the_hook_is_all_there_is(tmp_path: Path, home: Path) -> None:
    (home / ".gemini" / "settings.json").unlink()
    gemini.ecc_session_env("gemini", launch(tmp_path))
    private = tmp_path / "session-hooks" / "gemini-home" / ".gemini"
    settings = json.loads((private / "settings.json").read_text())
    assert [e["matcher"] for e in settings["hooks"]["BeforeTool"]] == [".*"]
    assert not (private / "settings.json").is_symlink()


def test_a_session_without_enforcement_changes_nothing(tmp_path: Path, home: Path) -> None:
    assert gemini.ecc_session_env("gemini", launch(tmp_path, enforced=False)) == {}
    assert not (tmp_path / "session-hooks" / "gemini-home").exists()


@pytest.mark.parametrize(
    "workspace",
    [
        {"hooksConfig": {"enabled": False}},
        {"hooksConfig": {"enabled": "$OFF"}},
        {"hooksConfig": None},
        {"hooks": None},
        {"hooks": []},
    ],
)
def test_a_worktree_that_would_switch_the_hook_off_is_refused(
    tmp_path: Path, home: Path, workspace: dict
) -> None:
    ctx = launch(tmp_path)
    (ctx.working_dir / ".gemini").mkdir()
    (ctx.working_dir / ".gemini" / "settings.json").write_text(json.dumps(workspace))
    with pytest.raises(EccError, match="switch off ecc's hook") as raised:
        gemini.ecc_session_env("gemini", ctx)
    assert "\n" not in str(raised.value)
    assert not (tmp_path / "session-hooks" / "gemini-home").exists()


def test_a_worktree_adding_hooks_of_its_own_is_fine(tmp_path: Path, home: Path) -> None:
    ctx = launch(tmp_path)
    (ctx.working_dir / ".gemini").mkdir()
    (ctx.working_dir / ".gemini" / "settings.json").write_text(
        json.dumps({"hooks": {"BeforeTool": []}, "hooksConfig": {"enabled": True}})
    )
    assert "GEMINI_CLI_HOME" in gemini.ecc_session_env("gemini", ctx)


def test_system_settings_that_switch_hooks_off_are_refused(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    system = tmp_path / "system.json"
    system.write_text('{"hooksConfig": {"enabled": false}}')
    monkeypatch.setenv("GEMINI_CLI_SYSTEM_SETTINGS_PATH", str(system))
    with pytest.raises(EccError, match="system settings"):
        gemini.ecc_session_env("gemini", launch(tmp_path))


def test_unreadable_user_settings_are_a_clear_error(tmp_path: Path, home: Path) -> None:
    (home / ".gemini" / "settings.json").write_text("{not json")
    with pytest.raises(EccError, match=r"user settings\) is not valid JSON"):
        gemini.ecc_session_env("gemini", launch(tmp_path))
