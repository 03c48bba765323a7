"""``ecc sync`` for the Gemini CLI: the project's shared rules, commands and hooks in its files.

Gemini CLI 0.61 reads every one of them only in a trusted folder (folder trust is on by
default; a headless run in an untrusted folder refuses to start): a person trusts it when Gemini
asks on its first interactive start (or lists it in ``~/.gemini/trustedFolders.json``), and
``GEMINI_CLI_TRUST_WORKSPACE=true`` trusts it for one run. ``--skip-trust`` (ecc's own sessions)
trusts the folder only after the settings were loaded: such a run reads ``GEMINI.md`` and
``.gemini/commands`` but not the hooks of ``.gemini/settings.json``.

* **rules** (translated): ecc's section of ``GEMINI.md`` imports ``@AGENTS.md`` (Gemini expands
  ``@path`` imports inside the project), whose ecc section holds the rules, the one rendering
  every harness reads (:func:`ecc.adapterkit.surfaces.imported_rules`). ``context.fileName``
  would also name ``AGENTS.md``, but only through the workspace settings, which a run with
  ``--skip-trust`` (ecc's own sessions) does not read, while it does read ``GEMINI.md``.
* **commands** (translated): ``.gemini/commands/NAME.toml`` with ``description`` and ``prompt``;
  ``$ARGUMENTS`` becomes ``{{args}}``. Gemini has no positional words: a prompt using ``$1``…
  ``$9`` keeps them and says which words of ``{{args}}`` they are. ``!{...}`` (run a shell
  command) and ``@{...}`` (read a file) mean something in a Gemini prompt and nothing in the
  source, so they are broken up. There is no ``argument-hint``.
* **hooks** (translated): the ``hooks`` table of ``.gemini/settings.json`` beside ecc's risk
  hook: ``BeforeTool``, ``AfterTool``, ``SessionStart``, ``SessionEnd`` and ``BeforeAgent``
  (after a prompt is submitted), timeouts in milliseconds; ``hooksConfig.enabled`` is true
  unless a person switched it off. Tool names are Gemini's (``run_shell_command``,
  ``write_file``, ``replace``...).
"""

from __future__ import annotations

import re

from ecc.adapterkit.surfaces import (
    hook_groups,
    hooks_table_merge,
    imported_rules,
    matcher_notes,
    toml_string,
)
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import SurfaceFile, SurfacePlan, SyncCommand, SyncSource

__all__ = ["ecc_sync_surface"]

EVENTS = {
    "pre_tool": "BeforeTool",
    "post_tool": "AfterTool",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "prompt_submit": "BeforeAgent",
}
TRUST_NOTE = (
    "Gemini CLI reads a project's {what} only in a trusted folder (trust it when Gemini asks,"
    " or list it in ~/.gemini/trustedFolders.json)"
)
HOOKS_SKIP_TRUST = "; a run with --skip-trust (ecc's sessions) does not read it"
_POSITIONAL = re.compile(r"(?<!\\)\$[1-9](?!\w)")
_INJECTION = re.compile(r"([!@])\{")
POSITIONAL_LINE = (
    "(In this prompt $1 stands for the first word of the command's arguments, $2 for the"
    " second, and so on. The arguments: {{args}})"
)


def _rules(source: SyncSource) -> SurfacePlan:
    files = imported_rules(source, source.project_dir / "GEMINI.md")
    return SurfacePlan("translated", files, [TRUST_NOTE.format(what="GEMINI.md")])


def _prompt(command: SyncCommand, notes: list[str]) -> str:
    prompt = _INJECTION.sub(r"\1 {", command.body)
    if prompt != command.body:
        notes.append(f"/{command.name}: '!{{' and '@{{' would run a command or read a file in"
                     " Gemini CLI: written with a space after '!' and '@'")  # fmt: skip
    prompt = prompt.replace("$ARGUMENTS", "{{args}}")
    if _POSITIONAL.search(prompt):
        notes.append(f"/{command.name}: Gemini CLI has no $1..$9, only {{{{args}}}}: the prompt"
                     " says which words they are")  # fmt: skip
        prompt = prompt.rstrip("\n") + "\n\n" + POSITIONAL_LINE + "\n"
    return prompt


def _commands(source: SyncSource) -> SurfacePlan:
    folder = source.project_dir / ".gemini" / "commands"
    files: list[SurfaceFile] = []
    notes: list[str] = []
    hinted = []
    for command in source.commands:
        lines = [f"# Written by ecc sync from the project's commands/{command.name}.md."]
        if command.description:
            lines.append(f"description = {toml_string(command.description)}")
        lines.append(f"prompt = {toml_string(_prompt(command, notes))}")
        files.append(SurfaceFile(folder / f"{command.name}.toml", content="\n".join(lines) + "\n"))
        if command.argument_hint:
            hinted.append(command.name)
    if hinted:
        notes.append(f"Gemini CLI shows no argument-hint ({', '.join(hinted)})")
    if files:
        notes.append(TRUST_NOTE.format(what=".gemini/commands"))
    return SurfacePlan("translated", files, notes)


def _hooks(source: SyncSource) -> SurfacePlan:
    path = source.project_dir / ".gemini" / "settings.json"
    groups = hook_groups(source.hooks, EVENTS, every_tool=".*", milliseconds=True)
    notes = [TRUST_NOTE.format(what=".gemini/settings.json (and its hooks)") + HOOKS_SKIP_TRUST]
    notes += matcher_notes(source.hooks)
    if any(hook.event == "prompt_submit" for hook in source.hooks):
        notes.append(
            "prompt_submit is Gemini's BeforeAgent: after a prompt, before the agent plans"
        )
    return SurfacePlan(
        "translated", [SurfaceFile(path, merge=hooks_table_merge(groups, path))], notes
    )


@hookimpl
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    render = {"rules": _rules, "commands": _commands, "hooks": _hooks}.get(surface)
    return None if render is None else render(source)
