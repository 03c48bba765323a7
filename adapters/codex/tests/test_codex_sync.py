"""``ecc sync`` for codex: the plans of the rules, commands and hooks surfaces.

Rules and commands go into ecc's marked sections of ``AGENTS.md`` (codex reads it natively; it
has had no custom prompts since 0.117), hooks into ``.codex/hooks.json`` through a merge that
keeps every entry not written by a sync, ecc's own risk hook among them.
"""

from __future__ import annotations

import json
from pathlib import Path

import ecc_adapter_codex as codex
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import SyncCommand, SyncHook, SyncRule, SyncSource

RISK_HOOK = "/opt/ecc/bin/ecc hook --harness codex"


def source(project: Path, **fields: object) -> SyncSource:
    base: dict[str, object] = {
        "instructions": "# Project\n\nBe kind to the tests.\n",
        "instructions_path": project / "AGENTS.md",
        "rules": (
            SyncRule("style", "Use black.\n", "House style", project / "rules" / "style.md"),
            SyncRule("tests", "Every fix has a test.\n", "", project / "rules" / "tests.md"),
        ),
        "commands": (
            SyncCommand("review", "Review $ARGUMENTS, then $1.\n", "Review a change", "<branch>"),
        ),
        "hooks": (
            SyncHook("post_tool", "make lint", "Bash", 30),
            SyncHook("session_start", "echo hi", "", 5),
        ),
    }
    base.update(fields)
    return SyncSource(project_dir=project, **base)  # type: ignore[arg-type]


def plan(surface: str, src: SyncSource):
    result = codex.ecc_sync_surface("codex", surface, src)
    assert result is not None
    return result


def test_the_core_calls_it_for_codex() -> None:
    assert "ecc_sync_surface" in hooks_called_for(codex, "codex")
    assert "ecc_sync_surface" not in hooks_called_for(codex, "claude")


def test_rules_are_a_section_of_agents_md(tmp_path: Path) -> None:
    result = plan("rules", source(tmp_path))
    assert result.mode == "native"
    [file] = result.files
    assert file.path == tmp_path / "AGENTS.md" and file.content is None and file.merge is None
    assert file.section is not None
    assert "Use black." in file.section and "Every fix has a test." in file.section
    assert "House style" in file.section
    # AGENTS.md is the shared source itself: its own text is not copied into it again
    assert "Be kind to the tests." not in file.section


def test_another_instructions_file_is_carried_too(tmp_path: Path) -> None:
    src = source(tmp_path, instructions="Shared words.\n", instructions_path=tmp_path / "X.md")
    [file] = plan("rules", src).files
    assert file.section is not None and file.section.index("Shared words.") < file.section.index(
        "Use black."
    )


def test_no_rules_and_agents_md_as_source_gives_no_file(tmp_path: Path) -> None:
    result = plan("rules", source(tmp_path, rules=()))
    assert result.mode == "native" and result.files == []


def test_an_empty_source_names_the_modes(tmp_path: Path) -> None:
    """What the compliance matrix asks: the mode, with an empty source."""
    empty = SyncSource(project_dir=tmp_path)
    assert [plan(s, empty).mode for s in ("rules", "commands", "hooks")] == [
        "native",
        "instruction-only",
        "translated",
    ]
    assert all(plan(s, empty).files == [] for s in ("rules", "commands"))
    assert codex.ecc_sync_surface("codex", "skills", empty) is None


def test_a_rendering_over_codexs_project_doc_limit_is_noted(tmp_path: Path) -> None:
    big = SyncRule("big", "x" * 40_000 + "\n", "", tmp_path / "rules" / "big.md")
    notes = plan("rules", source(tmp_path, rules=(big,))).notes
    assert any("project_doc_max_bytes" in note and "32768" in note for note in notes)
    assert not any("project_doc_max_bytes" in n for n in plan("rules", source(tmp_path)).notes)


def test_commands_are_described_in_agents_md(tmp_path: Path) -> None:
    result = plan("commands", source(tmp_path))
    assert result.mode == "instruction-only"
    [file] = result.files
    assert file.path == tmp_path / "AGENTS.md" and file.section is not None
    assert "/review <branch>" in file.section and "Review a change" in file.section
    assert "Review $ARGUMENTS, then $1." in file.section and "$ARGUMENTS" in file.section
    assert any("prompts" in note for note in result.notes)


def hooks_file_merge(src: SyncSource):
    result = plan("hooks", src)
    [file] = result.files
    assert file.path == src.project_dir / ".codex" / "hooks.json" and file.merge is not None
    return result, file.merge


def test_hooks_merge_into_codex_hooks_json_keeping_the_risk_hook_and_a_persons(
    tmp_path: Path,
) -> None:
    result, merge = hooks_file_merge(source(tmp_path))
    assert result.mode == "translated"
    assert any("trust" in note for note in result.notes)
    risk = {"matcher": "*", "hooks": [{"type": "command", "command": RISK_HOOK, "timeout": 630}]}
    mine = {"matcher": "Edit", "hooks": [{"type": "command", "command": "./mine.sh"}]}
    current = json.dumps({"hooks": {"PreToolUse": [risk], "PostToolUse": [mine]}}, indent=2)
    merged = merge(current)
    data = json.loads(merged)
    assert data["hooks"]["PreToolUse"] == [risk]
    assert data["hooks"]["PostToolUse"][0] == mine
    assert data["hooks"]["PostToolUse"][1] == {
        "matcher": "Bash",
        "hooks": [{"type": "command", "command": "make lint # ecc-sync", "timeout": 30}],
    }
    assert data["hooks"]["SessionStart"] == [
        {"hooks": [{"type": "command", "command": "echo hi # ecc-sync", "timeout": 5}]}
    ]
    assert merge(merged) == merged  # idempotent
    # a later sync replaces exactly what a sync wrote
    _, fewer = hooks_file_merge(source(tmp_path, hooks=(SyncHook("pre_tool", "./check"),)))
    again = json.loads(fewer(merged))
    assert again["hooks"]["PreToolUse"][0] == risk
    assert again["hooks"]["PreToolUse"][1]["hooks"][0]["command"] == "./check # ecc-sync"
    assert again["hooks"]["PostToolUse"] == [mine] and "SessionStart" not in again["hooks"]
    # and none left: the file is what it was before any sync
    _, none = hooks_file_merge(source(tmp_path, hooks=()))
    assert json.loads(none(merged)) == json.loads(current)


def test_hooks_merge_from_no_file_and_back(tmp_path: Path) -> None:
    _, merge = hooks_file_merge(source(tmp_path))
    created = merge(None)
    assert set(json.loads(created)["hooks"]) == {"PostToolUse", "SessionStart"}
    _, none = hooks_file_merge(source(tmp_path, hooks=()))
    assert none(created) == "" and none(None) == ""


def test_every_event_has_a_codex_name(tmp_path: Path) -> None:
    from ecc.contract.types import HOOK_EVENTS

    hooks = tuple(SyncHook(event, f"echo {event}") for event in HOOK_EVENTS)
    _, merge = hooks_file_merge(source(tmp_path, hooks=hooks))
    assert set(json.loads(merge(None))["hooks"]) == {
        "PreToolUse",
        "PostToolUse",
        "SessionStart",
        "SessionEnd",
        "UserPromptSubmit",
    }


@pytest.mark.parametrize("bad", ["[]", "not json", '{"hooks": []}'])
def test_a_hooks_file_that_is_not_codexs_shape_is_refused(tmp_path: Path, bad: str) -> None:
    _, merge = hooks_file_merge(source(tmp_path))
    with pytest.raises(EccError, match=r"hooks\.json"):
        merge(bad)


def test_a_session_end_hook_longer_than_codex_allows_is_noted(tmp_path: Path) -> None:
    """codex 0.171 clamps a SessionEnd hook's timeout to 3 s (it says so on every run)."""
    long = source(tmp_path, hooks=(SyncHook("session_end", "./report", "", 30),))
    assert any("3 s" in note for note in plan("hooks", long).notes)
    short = source(tmp_path, hooks=(SyncHook("session_end", "./report", "", 3),))
    assert not any("3 s" in note for note in plan("hooks", short).notes)


def test_a_file_in_sync_is_left_byte_for_byte_whatever_came_after_the_sync(
    tmp_path: Path,
) -> None:
    """ecc hooks install (or a person) adding entries after a sync: the merge keeps the order,
    so ``ecc sync --check`` does not call the file drifted."""
    _, merge = hooks_file_merge(source(tmp_path))
    data = json.loads(merge(None))
    risk = {"matcher": "*", "hooks": [{"type": "command", "command": RISK_HOOK, "timeout": 630}]}
    data["hooks"]["PreToolUse"] = [risk]  # a new event key after the synced ones
    mine = {"hooks": [{"type": "command", "command": "./after.sh"}]}
    data["hooks"]["PostToolUse"].append(mine)  # after the synced entry of that event
    later = json.dumps(data, indent=2) + "\n"
    assert merge(later) == later


def test_the_size_note_counts_the_commands_section_too(tmp_path: Path) -> None:
    """Both sections land in the same AGENTS.md, which codex reads up to its limit."""
    big = SyncCommand("big", "y" * 40_000 + "\n", "A long prompt")
    notes = plan("rules", source(tmp_path, commands=(big,))).notes
    assert any("project_doc_max_bytes" in note for note in notes)
