"""``ecc sync`` for the Gemini CLI: the plans of the rules, commands and hooks surfaces.

Gemini CLI 0.61 reads ``GEMINI.md`` (with ``@path`` imports) and ``.gemini/commands/NAME.toml``
(``prompt``, ``description``; ``{{args}}``) in a trusted folder, and the ``hooks`` table of
``.gemini/settings.json`` (``BeforeTool``, ``AfterTool``..., timeouts in ms); the merge of that
file keeps everything a sync did not write, ecc's own risk hook and a person's own among them.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import ecc_adapter_gemini as gemini
import pytest

from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.errors import EccError
from ecc.contract.types import SurfacePlan, SyncCommand, SyncHook, SyncRule, SyncSource

RISK_HOOK = "/opt/ecc/bin/ecc hook --harness gemini"


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
            SyncCommand("pair", "Compare $1 with $2 (\"quoted\" \\ and ''').\n"),
        ),
        "hooks": (
            SyncHook("post_tool", "make lint", "run_shell_command", 30),
            SyncHook("session_start", "echo hi", "", 5),
            SyncHook("pre_tool", "./check.sh", "", 10),
        ),
    }
    base.update(fields)
    return SyncSource(project_dir=project, **base)  # type: ignore[arg-type]


def plan(surface: str, src: SyncSource) -> SurfacePlan:
    result = gemini.ecc_sync_surface("gemini", surface, src)
    assert result is not None
    return result


def test_the_core_calls_it_for_gemini() -> None:
    assert "ecc_sync_surface" in hooks_called_for(gemini, "gemini")
    assert "ecc_sync_surface" not in hooks_called_for(gemini, "claude")


# -- rules ------------------------------------------------------------------------------------


def test_rules_live_once_in_agents_md_which_gemini_md_imports(tmp_path: Path) -> None:
    """The one rendering of the rules is ecc's section of AGENTS.md (codex and OpenCode give the
    same): GEMINI.md imports it, so Gemini reads each rule once whoever else is synced."""
    from ecc.adapterkit.surfaces import agents_md_rules

    src = source(tmp_path)
    result = plan("rules", src)
    assert result.mode == "translated"
    by_path = {f.path: f for f in result.files}
    assert set(by_path) == {tmp_path / "AGENTS.md", tmp_path / "GEMINI.md"}
    assert by_path[tmp_path / "GEMINI.md"].section == "@AGENTS.md\n"
    assert by_path[tmp_path / "AGENTS.md"].section == agents_md_rules(src)
    assert any("trusted folder" in note for note in result.notes)


def test_without_instructions_or_rules_there_is_no_section(tmp_path: Path) -> None:
    src = source(tmp_path, instructions="", instructions_path=None, rules=())
    assert plan("rules", src).files == []


def test_an_empty_source_names_the_modes(tmp_path: Path) -> None:
    empty = SyncSource(project_dir=tmp_path)
    assert plan("rules", empty).mode == "translated" and plan("rules", empty).files == []
    assert plan("commands", empty).mode == "translated" and plan("commands", empty).files == []
    assert plan("hooks", empty).mode == "translated"
    assert gemini.ecc_sync_surface("gemini", "skills", empty) is None


# -- commands ---------------------------------------------------------------------------------


def commands_of(result: SurfacePlan) -> dict[str, dict[str, str]]:
    found = {}
    for file in result.files:
        assert file.path.parent.parts[-2:] == (".gemini", "commands") and file.content is not None
        found[file.path.name] = tomllib.loads(file.content)
    return found


def test_commands_are_toml_files_with_args_placeholders(tmp_path: Path) -> None:
    result = plan("commands", source(tmp_path))
    assert result.mode == "translated"
    parsed = commands_of(result)
    assert set(parsed) == {"review.toml", "pair.toml"}
    assert parsed["review.toml"] == {
        "description": "Review a change",
        "prompt": "Review {{args}}.\n",
    }
    assert any("argument-hint" in note for note in result.notes)


def test_positional_words_are_explained_with_the_arguments(tmp_path: Path) -> None:
    result = plan("commands", source(tmp_path))
    prompt = commands_of(result)["pair.toml"]["prompt"]
    assert prompt.startswith("Compare $1 with $2 (\"quoted\" \\ and ''').\n")  # kept exactly
    assert "{{args}}" in prompt and "$1" in prompt.split("\n\n")[-1]
    assert any("$1" in note and "pair" in note for note in result.notes)


def test_gemini_injections_in_a_source_are_defused(tmp_path: Path) -> None:
    """``!{...}`` runs a shell command in a Gemini command, ``@{...}`` reads a file: text in
    the source (Claude Code's syntax) must stay text."""
    risky = SyncCommand("risky", "Run !{rm -rf /} and read @{/etc/passwd} for $ARGUMENTS\n")
    result = plan("commands", source(tmp_path, commands=(risky,)))
    prompt = commands_of(result)["risky.toml"]["prompt"]
    assert "!{" not in prompt and "@{" not in prompt and "{{args}}" in prompt
    assert any("risky" in note and "!{" in note for note in result.notes)


# -- hooks ------------------------------------------------------------------------------------


def settings_of(result: SurfacePlan, project: Path, current: str | None) -> str:
    [file] = result.files
    assert file.path == project / ".gemini" / "settings.json" and file.merge is not None
    return file.merge(current)


def test_hooks_become_gemini_hook_groups_in_milliseconds(tmp_path: Path) -> None:
    result = plan("hooks", source(tmp_path))
    assert result.mode == "translated"
    data = json.loads(settings_of(result, tmp_path, None))
    assert data == {
        "hooks": {
            "AfterTool": [
                {
                    "matcher": "run_shell_command",
                    "hooks": [
                        {"type": "command", "command": "make lint # ecc-sync", "timeout": 30000}
                    ],
                }
            ],
            "SessionStart": [
                {"hooks": [{"type": "command", "command": "echo hi # ecc-sync", "timeout": 5000}]}
            ],
            "BeforeTool": [
                {
                    "matcher": ".*",
                    "hooks": [
                        {"type": "command", "command": "./check.sh # ecc-sync", "timeout": 10000}
                    ],
                }
            ],
        }
    }
    assert any("trusted folder" in note for note in result.notes)


@pytest.mark.parametrize(
    ("event", "gemini_event"), [("session_end", "SessionEnd"), ("prompt_submit", "BeforeAgent")]
)
def test_every_event_has_its_gemini_name(tmp_path: Path, event: str, gemini_event: str) -> None:
    result = plan("hooks", source(tmp_path, hooks=(SyncHook(event, "true"),)))
    assert list(json.loads(settings_of(result, tmp_path, None))["hooks"]) == [gemini_event]


def test_the_merge_keeps_the_risk_hook_mcp_and_a_persons_own(tmp_path: Path) -> None:
    risk = {"type": "command", "command": RISK_HOOK, "timeout": 630000}
    current = json.dumps(
        {
            "mcpServers": {"ecc-memory": {"command": "ecc-memory-mcp"}},
            "hooksConfig": {"enabled": True},
            "hooks": {
                "BeforeTool": [{"matcher": ".*", "hooks": [risk]}],
                "AfterTool": [
                    {"matcher": "write_file", "hooks": [{"type": "command", "command": "./m.sh"}]},
                    {"hooks": [{"type": "command", "command": "gone # ecc-sync"}]},
                ],
            },
        }
    )
    merge = plan("hooks", source(tmp_path)).files[0].merge
    assert merge is not None
    once = merge(current)
    assert merge(once) == once
    data = json.loads(once)
    assert data["mcpServers"] == {"ecc-memory": {"command": "ecc-memory-mcp"}}
    assert data["hooksConfig"] == {"enabled": True}
    before = [h["command"] for g in data["hooks"]["BeforeTool"] for h in g["hooks"]]
    assert before == [RISK_HOOK, "./check.sh # ecc-sync"]
    after = [h["command"] for g in data["hooks"]["AfterTool"] for h in g["hooks"]]
    assert after == ["./m.sh", "make lint # ecc-sync"]
    emptied = plan("hooks", source(tmp_path, hooks=())).files[0].merge
    assert emptied is not None
    left = json.loads(emptied(once))
    assert left["hooks"] == {
        "BeforeTool": [{"matcher": ".*", "hooks": [risk]}],
        "AfterTool": [
            {"matcher": "write_file", "hooks": [{"type": "command", "command": "./m.sh"}]}
        ],
    }


def test_a_settings_file_that_is_not_an_object_is_refused(tmp_path: Path) -> None:
    merge = plan("hooks", source(tmp_path)).files[0].merge
    assert merge is not None
    with pytest.raises(EccError, match=r"settings\.json"):
        merge("[]")
    assert merge(None) and json.loads(merge(""))["hooks"]


def test_gemini_md_as_the_shared_instructions_is_not_imported_into_itself(tmp_path: Path) -> None:
    src = source(tmp_path, instructions_path=tmp_path / "GEMINI.md")
    by_path = {f.path: f for f in plan("rules", src).files}
    own = by_path[tmp_path / "GEMINI.md"].section
    assert own is not None and "@" not in own
    assert "Be kind to the tests." not in own and "Use black." in own
