"""An agent writing ecc's own config, ecc's hooks or a harness's hook settings could switch the
guard off for every later call: the heuristic scores such a write as needing confirmation (asked
where the harness can ask, denied where it cannot), with the file named in the reason. Reading
those files, or writing files that merely look alike, scores as before."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ecc.contract.types import ToolCall
from ecc.observability.risk import assess
from ecc.runtime.config.model import Config
from tests.risk.test_risk import manager

GUARD = "hook configuration"
CONFIRM = ("require_confirmation", "block")


def score(tool: str, text: Any, **call: Any):
    return assess(ToolCall(tool=tool, input=text, **call), Config(), manager().hook)


def guard_reasons(result) -> list[str]:
    return [reason for reason in result.reasons if GUARD in reason]


@pytest.mark.parametrize(
    ("tool", "text", "named"),
    [
        ("Write", {"file_path": "/repo/.ecc/config.toml", "content": "[risk]"}, ".ecc/config.toml"),
        ("Write", ".ecc/config.toml", ".ecc/config.toml"),  # a one-line summary
        ("Edit", {"file_path": "/home/u/.claude/settings.json"}, ".claude/settings.json"),
        ("MultiEdit", {"file_path": ".claude/settings.local.json"}, "settings.local.json"),
        ("Write", {"file_path": "/repo/.codex/config.toml"}, ".codex/config.toml"),
        ("Edit", {"file_path": "/home/u/.codex/hooks.json"}, ".codex/hooks.json"),
        ("write_file", {"file_path": ".gemini/settings.json"}, ".gemini/settings.json"),
        ("replace", {"file_path": "/home/u/.gemini/settings.json"}, ".gemini/settings.json"),
        ("Write", {"file_path": "/repo/.opencode/ecc-hooks.js"}, "ecc-hooks.js"),
        ("Write", {"file_path": "/repo/.opencode/plugin/guard.ts"}, ".opencode/plugin/guard.ts"),
        ("Write", {"file_path": "/home/u/.config/opencode/plugins/x.js"}, "plugins/x.js"),
        ("edit", {"filePath": "/repo/opencode.json"}, "opencode.json"),
        ("Write", {"file_path": "~/.config/ecc/config.toml"}, ".config/ecc/config.toml"),
        ("NotebookEdit", {"notebook_path": "/repo/.claude/settings.json"}, "settings.json"),
    ],
)
def test_writing_hook_configuration_needs_confirmation(tool: str, text: object, named: str):
    result = score(tool, text)
    assert result.action in CONFIRM, result.as_dict()
    [reason] = guard_reasons(result)
    assert named in reason


def test_the_user_config_dir_wherever_it_is(isolated_env: Path):
    target = Path(os.environ["ECC_CONFIG_DIR"]) / "config.toml"
    result = score("Write", {"file_path": str(target)})
    assert result.action in CONFIRM and str(target) in guard_reasons(result)[0]


def test_codex_home_wherever_it_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    result = score("Write", {"file_path": str(tmp_path / "codex-home" / "hooks.json")})
    assert result.action in CONFIRM and guard_reasons(result)


def test_a_patch_touching_hook_settings_needs_confirmation():
    patch = "*** Begin Patch\n*** Update File: .claude/settings.json\n@@\n-a\n+b\n*** End Patch\n"
    result = score("apply_patch", {"input": patch}, kind="edit")
    assert result.action in CONFIRM and ".claude/settings.json" in guard_reasons(result)[0]
    moved = "*** Begin Patch\n*** Update File: new.json\n*** Move to: .codex/hooks.json\n"
    result = score("apply_patch", {"patch": moved + "*** End Patch\n"}, kind="edit")
    assert result.action in CONFIRM and ".codex/hooks.json" in guard_reasons(result)[0]


@pytest.mark.parametrize(
    ("command", "named"),
    [
        ("echo '{}' > .claude/settings.json", ".claude/settings.json"),
        ("jq . new.json >> ~/.claude/settings.json", ".claude/settings.json"),
        ("cat x.json | tee -a .gemini/settings.json", ".gemini/settings.json"),
        ("sed -i 's/ecc hook/true/' .codex/hooks.json", ".codex/hooks.json"),
        ("cp /tmp/empty.json .claude/settings.local.json", "settings.local.json"),
        ("mv .claude/settings.json /tmp/off.json", ".claude/settings.json"),
        ("cp /tmp/x/settings.json .claude/", ".claude/settings.json"),
        ("install -m 600 hooks.json ~/.codex/", ".codex/hooks.json"),
        ("dd if=/dev/zero of=.gemini/settings.json", ".gemini/settings.json"),
        ("rm -f .ecc/config.toml", ".ecc/config.toml"),
        ("bash -c 'echo > .opencode/ecc-hooks.js'", "ecc-hooks.js"),
        ("ecc config set risk.enforce false --user", "ecc config set"),
        ("ecc hooks uninstall --harness claude", "ecc hooks uninstall"),
        ("cd /repo && perl -pi -e 's/a/b/' opencode.json", "opencode.json"),
    ],
)
def test_shell_writes_to_hook_configuration_need_confirmation(command: str, named: str):
    result = score("Bash", {"command": command})
    assert result.action in CONFIRM, result.as_dict()
    [reason] = guard_reasons(result)
    assert named in reason


def test_deleting_the_hook_settings_is_blocked():
    assert score("Bash", {"command": "rm .claude/settings.json"}).action == "block"


@pytest.mark.parametrize(
    ("tool", "text", "expected"),
    [
        ("Read", {"file_path": "/repo/.claude/settings.json"}, 0.05),
        ("Read", ".ecc/config.toml", 0.05),
        ("Grep", {"pattern": "hook", "path": ".codex/hooks.json"}, 0.05),
        ("Bash", {"command": "cat .claude/settings.json"}, 0.20),
        ("Bash", {"command": "jq . .codex/hooks.json > /tmp/hooks.json"}, 0.20),
        ("Bash", {"command": "cp .claude/settings.json backup.json"}, 0.20),
        ("Bash", {"command": "sed -n 1p .gemini/settings.json"}, 0.20),
        ("Bash", {"command": "grep fail_closed .ecc/config.toml < /dev/null"}, 0.20),
        ("Bash", {"command": "ecc config show --origin"}, 0.20),
        ("Write", {"file_path": "docs/config.toml.md"}, 0.15),
        ("Write", {"file_path": "src/settings.json"}, 0.15),
        ("Write", {"file_path": "config.toml"}, 0.15),
        ("Write", {"file_path": ".ecc/memory/project/notes.md"}, 0.15),
        ("Write", {"file_path": "docs/claude/settings.json"}, 0.15),
        ("Edit", {"file_path": "src/opencode/plugin/loader.ts"}, 0.10),
    ],
)
def test_reading_or_writing_look_alikes_is_not_a_guard_change(tool, text, expected):
    result = score(tool, text)
    assert not guard_reasons(result)
    assert result.score == pytest.approx(expected)
