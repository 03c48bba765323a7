"""Pure helpers adapters share to render ``ecc sync``'s surfaces (``ecc_sync_surface``).

Several harnesses read the same file (codex and OpenCode both read ``AGENTS.md``): the core
writes one section given identically by several harnesses once, and refuses two different
versions, so every adapter renders ``AGENTS.md``'s sections with these functions.

A project hook ecc writes into a shared hook config carries :data:`SYNC_MARK` at the end of its
command, so a later merge replaces or removes exactly the entries a sync wrote; ecc's own risk
hook (``… ecc hook --harness NAME``) never carries it: :func:`hooks_table_merge` is that merge
for the Claude-style ``hooks`` table Claude Code, Gemini CLI and codex share.
"""

from __future__ import annotations

import json

from ecc.contract.errors import EccError

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from pathlib import Path
    from typing import Any

    from ecc.contract.types import SurfaceFile, SyncHook, SyncSource

SYNC_MARK = " # ecc-sync"  # a shell comment: the command runs the same with it
PLACEHOLDERS = (
    "`$ARGUMENTS` stands for everything written after the command's name, and `$1` to `$9`"
    " for its first words"
)


def is_synced(command: object) -> bool:
    """Whether a hook command in a harness's config was written by ``ecc sync``."""
    return isinstance(command, str) and command.rstrip().endswith(SYNC_MARK.strip())


def _shared_instructions(source: SyncSource) -> str:
    """The instructions' text when they are not ``AGENTS.md`` itself (then it is read as is)."""
    if source.instructions_path == source.project_dir / "AGENTS.md":
        return ""
    return source.instructions.strip()


def agents_md_rules(source: SyncSource, with_instructions: bool = True) -> str | None:
    """ecc's ``rules`` section of ``AGENTS.md``: the shared instructions (when another file
    holds them, unless ``with_instructions`` is false) and every rule, or None when there is
    nothing to add."""
    instructions = _shared_instructions(source) if with_instructions else ""
    if not instructions and not source.rules:
        return None
    parts = [
        "# Project rules\n\nWritten by `ecc sync` from the project's shared source: edit the"
        " source, then run `ecc sync`."
    ]
    if instructions:
        parts.append(instructions)
    for rule in source.rules:
        heading = f"## {rule.name}: {rule.description}" if rule.description else f"## {rule.name}"
        parts.append(f"{heading}\n\n{rule.text.strip()}")
    return "\n\n".join(parts) + "\n"


def agents_md_commands(source: SyncSource) -> str | None:
    """ecc's ``commands`` section of ``AGENTS.md`` for a harness without custom commands: what
    ``/NAME ARGS`` in a prompt asks for, with each command's prompt (None: no commands)."""
    if not source.commands:
        return None
    parts = [
        "# Project commands\n\nWhen a prompt starts with `/NAME` for one of the commands below,"
        f" do what that command's prompt says. In a prompt, {PLACEHOLDERS} (split on spaces)."
    ]
    for command in source.commands:
        usage = f"/{command.name} {command.argument_hint}".rstrip()
        lines = [f"## `{usage}`"]
        if command.description:
            lines.append(command.description)
        lines.append(f"Prompt:\n\n{command.body.strip()}")
        parts.append("\n\n".join(lines))
    return "\n\n".join(parts) + "\n"


def front_matter(fields: dict[str, str]) -> str:
    """``---`` front matter of the non-empty ``fields`` ('' when there are none), quoted where
    YAML would read a value otherwise: the shape the source's own files have."""
    from ecc.portability.syncsource import front_matter as render

    return render(fields)


# -- imports and TOML (Claude Code and Gemini CLI) -----------------------------------------------


def imported_rules(source: SyncSource, context_file: Path) -> list[SurfaceFile]:
    """The rules of a harness that reads ``AGENTS.md`` only through an ``@AGENTS.md`` import in
    its own context file (``CLAUDE.md``, ``GEMINI.md``: both expand ``@path`` imports).

    ``AGENTS.md`` is the one rendering of the rules every harness reads: ecc's ``rules``
    section there (:func:`agents_md_rules`, the same section codex and OpenCode give) and, in
    ``context_file``, a section holding only the import. Copying the rules into the context file
    too would make such a harness read each twice whenever a harness reading ``AGENTS.md``
    itself is synced beside it, and a plan cannot know the others.
    """
    from ecc.contract.types import SurfaceFile

    agents_md = source.project_dir / "AGENTS.md"
    files = []
    rules = agents_md_rules(source)
    if rules is not None:
        files.append(SurfaceFile(agents_md, section=rules))
    if source.instructions_path == context_file:  # read as is: only the rules are new to it
        own = agents_md_rules(source, with_instructions=False)
        return files + ([SurfaceFile(context_file, section=own)] if own else [])
    agents_is_source = source.instructions_path == agents_md and source.instructions.strip()
    if rules is not None or agents_is_source:
        files.append(SurfaceFile(context_file, section="@AGENTS.md\n"))
    return files


def toml_string(text: str) -> str:
    """``text`` as a TOML multi-line basic string, exactly (``tomllib.loads`` gives it back)."""
    escaped = []
    for char in text:
        if char == "\\":
            escaped.append("\\\\")
        elif char in "\n\t":
            escaped.append(char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            escaped.append(f"\\u{ord(char):04x}")
        else:
            escaped.append(char)
    body = "".join(escaped).replace('"""', '""\\"')
    return f'"""\n{body}"""'


# -- project hooks in a Claude-style hooks table (Claude Code, Gemini CLI, codex) ---------------

TOOL_EVENTS = frozenset({"pre_tool", "post_tool"})


def hook_groups(
    hooks: Iterable[SyncHook],
    events: Mapping[str, str],
    *,
    every_tool: str,
    milliseconds: bool = False,
) -> list[tuple[str, dict[str, Any]]]:
    """``(HARNESS_EVENT, group)`` for each hook: ``{"matcher", "hooks": [{"type": "command",
    "command": COMMAND + SYNC_MARK, "timeout"}]}``. A tool event's empty matcher is
    ``every_tool`` (the harness's "all tools"); the other events get no matcher (harnesses
    compare it with a session's source or reason, not a tool name)."""
    groups = []
    for hook in hooks:
        timeout = hook.timeout_secs * 1000 if milliseconds else hook.timeout_secs
        handler = {"type": "command", "command": hook.command + SYNC_MARK, "timeout": timeout}
        group: dict[str, Any] = {"hooks": [handler]}
        matcher = hook.matcher or every_tool  # "" (codex): no matcher is every tool
        if hook.event in TOOL_EVENTS and matcher:
            group = {"matcher": matcher, **group}
        groups.append((events[hook.event], group))
    return groups


def matcher_notes(hooks: Iterable[SyncHook]) -> list[str]:
    """A note for each hook whose matcher its event cannot use."""
    return [
        f"the {hook.event} hook {hook.command!r} has a matcher, which only the tool events use:"
        " it runs on every one"
        for hook in hooks
        if hook.matcher and hook.event not in TOOL_EVENTS
    ]


def hooks_table_merge(
    groups: list[tuple[str, dict[str, Any]]], where: Path
) -> Callable[[str | None], str]:
    """The merge of a JSON settings file's ``hooks`` table (``{EVENT: [{"matcher", "hooks":
    [...]}]}``): every handler an earlier sync wrote (its command ends with :data:`SYNC_MARK`)
    is replaced by ``groups``, in its place (at the end of its event when it had none);
    everything else (ecc's risk hook, a person's hooks, every other setting) stays where it was.
    So a file already in sync, ``ecc hooks install`` having added the risk hook after a sync's
    entries, comes back unchanged: a file whose settings come out equal keeps its text, and one
    left empty is ``""`` (no file)."""
    ours: dict[str, list[dict[str, Any]]] = {}
    for event, group in groups:
        ours.setdefault(event, []).append(group)

    def merge(current: str | None) -> str:
        data = _settings(current, where)
        table = data.setdefault("hooks", {})
        for event in [*table, *(e for e in ours if e not in table)]:
            kept, first = _without_synced(table.get(event, []), where)
            at = len(kept) if first is None else first
            merged = kept[:at] + json.loads(json.dumps(ours.get(event, []))) + kept[at:]
            if merged:
                table[event] = merged
            else:
                table.pop(event, None)
        if not table:
            del data["hooks"]
        if current is not None and current.strip() and data == json.loads(current):
            return current
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n" if data else ""

    return merge


def _settings(current: str | None, where: Path) -> dict[str, Any]:
    if current is None or not current.strip():
        return {}
    try:
        data = json.loads(current)
    except ValueError as exc:
        raise EccError(f"{where} is not valid JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise EccError(f"{where} is not a JSON object; nothing was changed")
    if not isinstance(data.get("hooks", {}), dict):
        raise EccError(f'{where}: "hooks" is not a JSON object; nothing was changed')
    return data


def _without_synced(groups: Any, where: Path) -> tuple[list[Any], int | None]:
    """The groups without the handlers a sync wrote, and where the first of those was."""
    if not isinstance(groups, list):
        raise EccError(f"{where}: a hook event's value is not a list; nothing was changed")
    kept: list[Any] = []
    first = None
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            kept.append(group)
            continue
        others = [h for h in handlers if not (isinstance(h, dict) and is_synced(h.get("command")))]
        if len(others) == len(handlers):
            kept.append(group)
            continue
        first = len(kept) if first is None else first
        if others:
            kept.append({**group, "hooks": others})
    return kept, first
