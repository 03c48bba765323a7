"""``ecc sync`` for Claude Code: the project's shared rules, commands and hooks in its own files.

* **rules** (translated): Claude Code 2.1 reads ``CLAUDE.md`` and expands its ``@path`` imports
  (it does not read ``AGENTS.md`` by itself): the rules are ecc's section of ``AGENTS.md``, the
  one rendering every harness reads, and ecc's section of ``CLAUDE.md`` is ``@AGENTS.md``
  (:func:`ecc.adapterkit.surfaces.imported_rules`).
* **commands** (native): ``.claude/commands/NAME.md`` with ``description`` and
  ``argument-hint`` front matter, run as ``/NAME ARGS``. ``$ARGUMENTS`` is Claude's own; the
  source's ``$1``…``$9`` (its first to ninth words) are written ``$ARGUMENTS[0]``…, since Claude
  Code 2.1 counts the words from ``$0``.
* **hooks** (native): the ``hooks`` table of ``.claude/settings.json``, beside ecc's risk hook
  (``ecc hooks install``) and a person's own: ``PreToolUse``, ``PostToolUse``, ``SessionStart``,
  ``SessionEnd``, ``UserPromptSubmit``; timeouts in seconds. Claude Code reads a project's
  settings in ``--print`` runs without asking; an interactive session asks once to trust the
  folder.
"""

from __future__ import annotations

import re

from ecc.adapterkit.surfaces import (
    front_matter,
    hook_groups,
    hooks_table_merge,
    imported_rules,
    matcher_notes,
)
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import SurfaceFile, SurfacePlan, SyncSource

__all__ = ["ecc_sync_surface"]

EVENTS = {
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "prompt_submit": "UserPromptSubmit",
}
# ``$1``..``$9`` not escaped (``\$1``) and not the start of a longer name or number
_POSITIONAL = re.compile(r"(?<!\\)\$([1-9])(?![\w\[])")
RENUMBERED = (
    "{names}: the source's $1 is the first word, Claude Code 2.1's is $0: written"
    " $ARGUMENTS[0] and so on"
)
MATCHER_NOTE = (
    "Claude Code compares a matcher of only letters, digits, '_' and '|' with tool names"
    " exactly (Bash, Edit|Write), and any other as a regular expression"
)


def _rules(source: SyncSource) -> SurfacePlan:
    return SurfacePlan("translated", imported_rules(source, source.project_dir / "CLAUDE.md"))


def _commands(source: SyncSource) -> SurfacePlan:
    folder = source.project_dir / ".claude" / "commands"
    files, renumbered = [], []
    for command in source.commands:
        body = _POSITIONAL.sub(lambda m: f"$ARGUMENTS[{int(m.group(1)) - 1}]", command.body)
        if body != command.body:
            renumbered.append(command.name)
        fields = {"description": command.description, "argument-hint": command.argument_hint}
        files.append(
            SurfaceFile(folder / f"{command.name}.md", content=front_matter(fields) + body)
        )
    notes = [RENUMBERED.format(names=", ".join(renumbered))] if renumbered else []
    return SurfacePlan("native", files, notes)


def _hooks(source: SyncSource) -> SurfacePlan:
    path = source.project_dir / ".claude" / "settings.json"
    groups = hook_groups(source.hooks, EVENTS, every_tool="*")
    notes = matcher_notes(source.hooks)
    if any(hook.matcher for hook in source.hooks):
        notes.append(MATCHER_NOTE)
    return SurfacePlan("native", [SurfaceFile(path, merge=hooks_table_merge(groups, path))], notes)


@hookimpl
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    render = {"rules": _rules, "commands": _commands, "hooks": _hooks}.get(surface)
    return None if render is None else render(source)
