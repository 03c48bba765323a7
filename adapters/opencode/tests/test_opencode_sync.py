"""``ecc sync`` for OpenCode: rules in ``AGENTS.md`` (the section codex reads too), commands as
``.opencode/commands/NAME.md``, hooks as a plugin module OpenCode loads from
``.opencode/plugins/`` (run by node here as OpenCode runs it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import ecc_adapter_opencode as opencode
import pytest

from ecc.adapterkit.surfaces import agents_md_rules
from ecc.adapterkit.testing import hooks_called_for
from ecc.contract.types import HOOK_EVENTS, SyncCommand, SyncHook, SyncRule, SyncSource

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def source(project: Path, **fields: Any) -> SyncSource:
    base: dict[str, Any] = {
        "instructions": "# Project\n",
        "instructions_path": project / "AGENTS.md",
        "rules": (SyncRule("style", "Use black.\n", "House style", project / "rules/style.md"),),
        "commands": (
            SyncCommand("review", "Review $ARGUMENTS on $1.\n", 'Say "hi": now', "<branch>"),
            SyncCommand("plain", "Just do it.\n"),
        ),
        "hooks": (),
    }
    base.update(fields)
    return SyncSource(project_dir=project, **base)


def plan(surface: str, src: SyncSource):
    result = opencode.ecc_sync_surface("opencode", surface, src)
    assert result is not None
    return result


def test_the_core_calls_it_for_opencode() -> None:
    assert "ecc_sync_surface" in hooks_called_for(opencode, "opencode")
    assert hooks_called_for(opencode, "codex") == []


def test_rules_are_the_agents_md_section_codex_gives_too(tmp_path: Path) -> None:
    """One section for both harnesses that read AGENTS.md, so the core writes it once."""
    import ecc_adapter_codex as codex

    src = source(tmp_path)
    result = plan("rules", src)
    assert result.mode == "native"
    [file] = result.files
    assert file.path == tmp_path / "AGENTS.md" and file.section == agents_md_rules(src)
    [theirs] = codex.ecc_sync_surface("codex", "rules", src).files
    assert (theirs.path, theirs.section) == (file.path, file.section)
    assert plan("rules", source(tmp_path, rules=())).files == []


def test_commands_are_opencode_command_files(tmp_path: Path) -> None:
    result = plan("commands", source(tmp_path))
    assert result.mode == "native"
    review, plain = result.files
    assert review.path == tmp_path / ".opencode" / "commands" / "review.md"
    assert (
        review.content == '---\ndescription: "Say \\"hi\\": now"\n---\nReview $ARGUMENTS on $1.\n'
    )
    assert plain.path.name == "plain.md" and plain.content == "Just do it.\n"
    assert any("argument-hint" in note for note in result.notes)
    assert any("$1" in note for note in result.notes)


def test_an_empty_source_names_the_modes(tmp_path: Path) -> None:
    empty = SyncSource(project_dir=tmp_path)
    modes = [plan(s, empty).mode for s in ("rules", "commands", "hooks")]
    assert modes == ["native", "native", "translated"]
    assert all(plan(s, empty).files == [] for s in ("rules", "commands", "hooks"))
    assert opencode.ecc_sync_surface("opencode", "mcp", empty) is None


def test_hooks_are_one_plugin_module_for_every_event(tmp_path: Path) -> None:
    hooks = tuple(SyncHook(event, f"echo {event}") for event in HOOK_EVENTS)
    result = plan("hooks", source(tmp_path, hooks=hooks))
    assert result.mode == "translated"
    [file] = result.files
    assert file.path == tmp_path / ".opencode" / "plugins" / "ecc-sync-hooks.js"
    text = file.content
    assert text is not None and text.startswith("// ecc sync")
    for name in ("tool.execute.before", "tool.execute.after", "chat.message", "session.created"):
        assert name in text
    assert any("session.idle" in note for note in result.notes)
    assert plan("hooks", source(tmp_path, hooks=hooks)).files[0].content == text  # stable


def drive(module: Path, tmp_path: Path, calls: str) -> dict[str, Any]:
    """Load the module as OpenCode does (``directory`` is the project) and run ``calls``."""
    driver = tmp_path / "driver.mjs"
    driver.write_text(
        f"const mod = await import({json.dumps(module.as_uri())});\n"
        f"const hooks = await Object.values(mod)[0]({{directory: {json.dumps(str(tmp_path))}}});\n"
        "const out = {};\n"
        f"{calls}\n"
        "console.log(JSON.stringify(out));\n"
    )
    done = subprocess.run(["node", str(driver)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def write_module(tmp_path: Path, hooks: tuple[SyncHook, ...]) -> Path:
    [file] = plan("hooks", source(tmp_path, hooks=hooks)).files
    assert file.content is not None
    file.path.parent.mkdir(parents=True, exist_ok=True)
    file.path.write_text(file.content)
    return file.path


RECORD = (
    f"{sys.executable} -c 'import json, os, sys; "
    'open("seen.jsonl", "a").write(json.dumps({"cwd": os.getcwd(), "tag": sys.argv[1], '
    '"stdin": json.load(sys.stdin)}) + chr(10))\' '
)


def seen(tmp_path: Path) -> list[dict[str, Any]]:
    lines = (tmp_path / "seen.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


@needs_node
def test_tool_hooks_run_in_the_project_on_matching_tools_and_exit_2_blocks(
    tmp_path: Path,
) -> None:
    hooks = (
        SyncHook("pre_tool", RECORD + "before", "^bash$", 30),
        SyncHook("post_tool", RECORD + "after", "", 30),
        SyncHook("pre_tool", "echo no edits here >&2; exit 2", "edit", 30),
    )
    module = write_module(tmp_path, hooks)
    out = drive(
        module,
        tmp_path,
        "const input = {tool: 'bash', sessionID: 's1', callID: 'c1'};\n"
        "await hooks['tool.execute.before'](input, {args: {command: 'ls'}});\n"
        "await hooks['tool.execute.after']({...input, args: {command: 'ls'}},"
        " {title: '', output: 'x', metadata: {}});\n"
        "try { await hooks['tool.execute.before']({tool: 'edit', sessionID: 's1', callID: 'c2'},"
        " {args: {}}); out.edit = 'ran'; } catch (e) { out.edit = 'blocked: ' + e.message; }\n",
    )
    assert out == {"edit": "blocked: no edits here"}
    before, after = seen(tmp_path)
    assert (before["tag"], after["tag"]) == ("before", "after")
    assert before["cwd"] == str(tmp_path)
    assert before["stdin"] == {
        "hook_event_name": "PreToolUse",
        "session_id": "s1",
        "cwd": str(tmp_path),
        "tool_name": "bash",
        "tool_input": {"command": "ls"},
    }
    assert after["stdin"]["hook_event_name"] == "PostToolUse"


@needs_node
def test_session_and_prompt_hooks_and_a_timeout(tmp_path: Path) -> None:
    hooks = (
        SyncHook("session_start", RECORD + "start"),
        SyncHook("prompt_submit", RECORD + "prompt"),
        SyncHook("session_end", "sleep 30", "", 1),
    )
    module = write_module(tmp_path, hooks)
    out = drive(
        module,
        tmp_path,
        "await hooks.event({event: {type: 'session.created', properties: {info: {id: 's9'}}}});\n"
        "await hooks['chat.message']({sessionID: 's9'}, {message: {}, parts: []});\n"
        "const started = Date.now();\n"
        "await hooks.event({event: {type: 'session.idle', properties: {sessionID: 's9'}}});\n"
        "out.waited = Date.now() - started;\n",
    )
    assert 900 <= out["waited"] < 20_000  # killed at its 1 s timeout
    start, prompt = seen(tmp_path)
    assert start["stdin"]["hook_event_name"] == "SessionStart"
    assert start["stdin"]["session_id"] == "s9"
    assert prompt["stdin"]["hook_event_name"] == "UserPromptSubmit"


@needs_node
def test_a_claude_style_matcher_matches_opencodes_lowercase_tools_and_a_bad_one_is_skipped(
    tmp_path: Path,
) -> None:
    """The source's ``Bash|Edit`` names Claude Code's tools; OpenCode's are ``bash``, ``edit``.
    A matcher JavaScript cannot compile (Python's ``(?P<n>…)``) skips its hook, never every
    tool call."""
    hooks = (
        SyncHook("pre_tool", RECORD + "cased", "Bash|Edit", 30),
        SyncHook("pre_tool", "exit 2", "(?P<name>bash)", 30),
    )
    module = write_module(tmp_path, hooks)
    out = drive(
        module,
        tmp_path,
        "try { await hooks['tool.execute.before']({tool: 'bash', sessionID: 's', callID: 'c'},"
        " {args: {}}); out.bash = 'ran'; } catch (e) { out.bash = 'blocked: ' + e.message; }\n",
    )
    assert out == {"bash": "ran"}
    assert [entry["tag"] for entry in seen(tmp_path)] == ["cased"]
