"""``ecc sync`` for Claude Code: the plans of the rules, commands and hooks surfaces.

Claude Code 2.1 reads ``CLAUDE.md`` (with ``@path`` imports: the rules are ecc's section of
``AGENTS.md``, imported), ``.claude/commands/NAME.md`` as ``/NAME``, and the ``hooks``
table of ``.claude/settings.json``; the merge of that file keeps everything a sync did not write,
ecc's own risk hook and a person's own hooks among them.
"""

from __future__ import annotations

import json
from pathlib import Path

import ecc_adapter_claude as claude
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import SurfacePlan, SyncCommand, SyncHook, SyncRule, SyncSource

RISK_HOOK = "/opt/ecc/bin/ecc hook --harness claude"


def source(project: Path, **fields: object) -> SyncSource:
    base: dict[str, object] = {
        "instructions": "# Project\n\nBe kind to the tests.\n",
        "instructions_path": project / "AGENTS.md",
        "rules": (
            SyncRule("style", "Use black.\n", "House style", project / "rules" / "style.md"),
            SyncRule("tests", "Every fix has a test.\n", "", project / "rules" / "tests.md"),
        ),
        "commands": (
            SyncCommand("review", "Review $ARGUMENTS.\n", "Review a change", "<branch>"),
            SyncCommand("pair", "Compare $1 with $2 ($ARGUMENTS).\n"),
        ),
        "hooks": (
            SyncHook("post_tool", "make lint", "Bash", 30),
            SyncHook("session_start", "echo hi", "", 5),
            SyncHook("pre_tool", "./check.sh", "", 10),
        ),
    }
    base.update(fields)
    return SyncSource(project_dir=project, **base)  # type: ignore[arg-type]


def plan(surface: str, src: SyncSource) -> SurfacePlan:
    result = claude.ecc_sync_surface("claude", surface, src)
    assert result is not None
    return result


def test_the_core_calls_it_for_claude() -> None:
    assert "ecc_sync_surface" in hooks_called_for(claude, "claude")
    assert "ecc_sync_surface" not in hooks_called_for(claude, "gemini")


# -- rules ------------------------------------------------------------------------------------


def test_rules_live_once_in_agents_md_which_claude_md_imports(tmp_path: Path) -> None:
    """AGENTS.md holds the one rendering of the rules (the section codex and OpenCode give too),
    so Claude Code, which reads it through ``@AGENTS.md``, reads each rule once however many
    harnesses are synced."""
    from ecc.adapterkit.surfaces import agents_md_rules

    src = source(tmp_path)
    result = plan("rules", src)
    assert result.mode == "translated"
    by_path = {f.path: f for f in result.files}
    assert set(by_path) == {tmp_path / "AGENTS.md", tmp_path / "CLAUDE.md"}
    assert by_path[tmp_path / "CLAUDE.md"].section == "@AGENTS.md\n"
    rules = by_path[tmp_path / "AGENTS.md"].section
    assert rules == agents_md_rules(src)  # identical to codex's and OpenCode's: written once
    assert rules is not None and "Use black." in rules and "Every fix has a test." in rules
    assert "Be kind to the tests." not in rules  # AGENTS.md is the instructions: read as is


def test_instructions_in_another_file_go_into_agents_md_too(tmp_path: Path) -> None:
    src = source(tmp_path, instructions_path=tmp_path / "docs" / "AI.md", rules=())
    by_path = {f.path: f for f in plan("rules", src).files}
    assert by_path[tmp_path / "CLAUDE.md"].section == "@AGENTS.md\n"
    section = by_path[tmp_path / "AGENTS.md"].section
    assert section is not None and "Be kind to the tests." in section


def test_no_rules_and_no_instructions_give_no_file(tmp_path: Path) -> None:
    result = plan("rules", source(tmp_path, instructions="", instructions_path=None, rules=()))
    assert result.files == []


def test_an_empty_source_names_the_modes(tmp_path: Path) -> None:
    """What the compliance matrix asks: the mode, with an empty source."""
    empty = SyncSource(project_dir=tmp_path)
    assert plan("rules", empty).mode == "translated" and plan("rules", empty).files == []
    assert plan("commands", empty).mode == "native" and plan("commands", empty).files == []
    assert plan("hooks", empty).mode == "native"
    assert claude.ecc_sync_surface("claude", "skills", empty) is None


# -- commands ---------------------------------------------------------------------------------


def test_commands_are_claude_commands_with_front_matter(tmp_path: Path) -> None:
    result = plan("commands", source(tmp_path))
    assert result.mode == "native"
    by_name = {f.path.name: f for f in result.files}
    assert set(by_name) == {"review.md", "pair.md"}
    review = by_name["review.md"]
    assert review.path == tmp_path / ".claude" / "commands" / "review.md"
    assert review.content == (
        '---\ndescription: Review a change\nargument-hint: "<branch>"\n---\nReview $ARGUMENTS.\n'
    )


def test_positional_words_are_renumbered_for_claude_codes_zero_based_ones(tmp_path: Path) -> None:
    """The source's ``$1`` is the first word; Claude Code 2.1 counts from ``$0``."""
    result = plan("commands", source(tmp_path))
    pair = {f.path.name: f for f in result.files}["pair.md"]
    assert pair.content == "Compare $ARGUMENTS[0] with $ARGUMENTS[1] ($ARGUMENTS).\n"
    assert any("$1" in note and "$ARGUMENTS[0]" in note for note in result.notes)
    # $10 is not a placeholder of the source, and neither is an escaped \$1
    odd = SyncCommand("odd", "Cost \\$1, $10 and $9.\n")
    [file] = plan("commands", source(tmp_path, commands=(odd,))).files
    assert file.content == "Cost \\$1, $10 and $ARGUMENTS[8].\n"


# -- hooks ------------------------------------------------------------------------------------


def settings_of(result: SurfacePlan, project: Path, current: str | None) -> str:
    [file] = result.files
    assert file.path == project / ".claude" / "settings.json" and file.merge is not None
    return file.merge(current)


def test_hooks_become_claude_hook_groups(tmp_path: Path) -> None:
    result = plan("hooks", source(tmp_path))
    assert result.mode == "native"
    data = json.loads(settings_of(result, tmp_path, None))
    assert data == {
        "hooks": {
            "PostToolUse": [
                {
                    "matcher": "Bash",
                    "hooks": [
                        {"type": "command", "command": "make lint # ecc-sync", "timeout": 30}
                    ],
                }
            ],
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo hi # ecc-sync", "timeout": 5}]}
            ],
            "PreToolUse": [
                {
                    "matcher": "*",
                    "hooks": [
                        {"type": "command", "command": "./check.sh # ecc-sync", "timeout": 10}
                    ],
                }
            ],
        }
    }


@pytest.mark.parametrize(
    ("event", "claude_event"),
    [("session_end", "SessionEnd"), ("prompt_submit", "UserPromptSubmit")],
)
def test_every_event_has_its_claude_name(tmp_path: Path, event: str, claude_event: str) -> None:
    result = plan("hooks", source(tmp_path, hooks=(SyncHook(event, "true"),)))
    assert list(json.loads(settings_of(result, tmp_path, None))["hooks"]) == [claude_event]


def test_the_merge_keeps_the_risk_hook_and_a_persons_own(tmp_path: Path) -> None:
    current = json.dumps(
        {
            "permissions": {"allow": ["Bash(make:*)"]},
            "hooks": {
                "PreToolUse": [
                    {"matcher": "*", "hooks": [{"type": "command", "command": RISK_HOOK}]}
                ],
                "PostToolUse": [
                    {"matcher": "Edit", "hooks": [{"type": "command", "command": "./mine.sh"}]},
                    {
                        "matcher": "Bash",
                        "hooks": [{"type": "command", "command": "old # ecc-sync", "timeout": 1}],
                    },
                ],
            },
        }
    )
    merge = plan("hooks", source(tmp_path)).files[0].merge
    assert merge is not None
    once = merge(current)
    assert merge(once) == once  # idempotent
    data = json.loads(once)
    assert data["permissions"] == {"allow": ["Bash(make:*)"]}
    commands = [h["command"] for g in data["hooks"]["PreToolUse"] for h in g["hooks"]]
    assert commands == [RISK_HOOK, "./check.sh # ecc-sync"]
    post = [h["command"] for g in data["hooks"]["PostToolUse"] for h in g["hooks"]]
    assert post == ["./mine.sh", "make lint # ecc-sync"]  # the old synced one replaced
    # a source without hooks takes out exactly what a sync wrote
    emptied = plan("hooks", source(tmp_path, hooks=())).files[0].merge
    assert emptied is not None
    left = json.loads(emptied(once))
    assert left["hooks"] == {
        "PreToolUse": [{"matcher": "*", "hooks": [{"type": "command", "command": RISK_HOOK}]}],
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "./mine.sh"}]}
        ],
    }


def test_an_unchanged_file_keeps_its_own_layout(tmp_path: Path) -> None:
    merge = plan("hooks", source(tmp_path, hooks=())).files[0].merge
    assert merge is not None
    written = '{"model": "opus"}'
    assert merge(written) == written
    assert merge(None) == ""  # no file and nothing to add: no file


def test_a_file_of_only_synced_hooks_is_removed_with_them(tmp_path: Path) -> None:
    once = plan("hooks", source(tmp_path)).files[0].merge
    empty = plan("hooks", source(tmp_path, hooks=())).files[0].merge
    assert once is not None and empty is not None
    assert empty(once(None)) == ""


def test_a_settings_file_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    merge = plan("hooks", source(tmp_path)).files[0].merge
    assert merge is not None
    for bad in ("[1, 2]", "{not json", '{"hooks": []}', '{"hooks": {"PreToolUse": {}}}'):
        with pytest.raises(EccError, match=r"settings\.json"):
            merge(bad)


def test_a_matcher_on_a_session_event_is_noted_not_written(tmp_path: Path) -> None:
    result = plan("hooks", source(tmp_path, hooks=(SyncHook("session_end", "true", "Bash"),)))
    data = json.loads(settings_of(result, tmp_path, None))
    assert "matcher" not in data["hooks"]["SessionEnd"][0]
    assert any("matcher" in note for note in result.notes)


def test_claude_md_as_the_shared_instructions_is_not_imported_into_itself(tmp_path: Path) -> None:
    """Claude Code reads CLAUDE.md as it is: its section adds only the rules, no import of
    AGENTS.md (whose section, for the other harnesses, also carries the instructions)."""
    src = source(tmp_path, instructions_path=tmp_path / "CLAUDE.md")
    by_path = {f.path: f for f in plan("rules", src).files}
    own = by_path[tmp_path / "CLAUDE.md"].section
    assert own is not None and "@AGENTS.md" not in own and "Use black." in own
    assert "Be kind to the tests." not in own
    shared = by_path[tmp_path / "AGENTS.md"].section
    assert shared is not None and "Be kind to the tests." in shared
