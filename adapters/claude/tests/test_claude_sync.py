"""``ecc sync`` for Claude Code: the plans of the rules, commands and hooks surfaces.

Claude Code 2.1 reads ``CLAUDE.md`` (with ``@path`` imports) and every ``.claude/rules/*.md``
without ``paths`` front matter, ``.claude/commands/NAME.md`` as ``/NAME``, and the ``hooks``
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


def test_rules_import_the_instructions_into_claude_md_and_copy_each_rule(tmp_path: Path) -> None:
    result = plan("rules", source(tmp_path))
    assert result.mode == "native"
    by_path = {f.path: f for f in result.files}
    assert set(by_path) == {
        tmp_path / "CLAUDE.md",
        tmp_path / ".claude" / "rules" / "style.md",
        tmp_path / ".claude" / "rules" / "tests.md",
    }
    section = by_path[tmp_path / "CLAUDE.md"].section
    assert section is not None and "@AGENTS.md" in section.splitlines()
    assert "Be kind to the tests." not in section  # imported, not copied
    style = by_path[tmp_path / ".claude" / "rules" / "style.md"]
    assert style.content == "---\ndescription: House style\n---\nUse black.\n"
    # no "paths" key: Claude Code loads the rule in every session, not only for some files
    assert by_path[tmp_path / ".claude" / "rules" / "tests.md"].content == "Every fix has a test.\n"


def test_instructions_in_another_file_are_imported_from_there(tmp_path: Path) -> None:
    src = source(tmp_path, instructions_path=tmp_path / "docs" / "AGENTS.md", rules=())
    [file] = plan("rules", src).files
    assert file.section is not None and "@docs/AGENTS.md" in file.section.splitlines()


def test_a_path_an_import_cannot_name_is_copied_instead(tmp_path: Path) -> None:
    src = source(tmp_path, instructions_path=tmp_path / "my notes.md", rules=())
    [file] = plan("rules", src).files
    assert file.section is not None and "Be kind to the tests." in file.section
    assert "@" not in file.section


def test_no_instructions_gives_only_the_rule_copies(tmp_path: Path) -> None:
    result = plan("rules", source(tmp_path, instructions="", instructions_path=None))
    assert [f.path.name for f in result.files] == ["style.md", "tests.md"]


def test_an_empty_source_names_the_modes(tmp_path: Path) -> None:
    """What the compliance matrix asks: the mode, with an empty source."""
    empty = SyncSource(project_dir=tmp_path)
    assert plan("rules", empty).mode == "native" and plan("rules", empty).files == []
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
    src = source(tmp_path, instructions_path=tmp_path / "CLAUDE.md")
    paths = [f.path for f in plan("rules", src).files]
    assert tmp_path / "CLAUDE.md" not in paths and len(paths) == 2
