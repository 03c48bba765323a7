"""``ecc sync`` for codex: the project's shared rules, commands and hooks in codex's own files.

* **rules** (native): codex reads ``AGENTS.md`` from the repository root down to its working
  directory. The shared instructions file *is* ``AGENTS.md`` by default, so only the rules (and
  the instructions, when ``[sync] instructions`` names another file) go into ecc's ``rules``
  section of it. Codex reads at most ``project_doc_max_bytes`` (32 KiB by default) of project
  instructions and truncates the rest: a rendering over that is noted.
* **commands** (instruction-only): codex has had no custom prompts since 0.117 (they were
  user-level only, ``$CODEX_HOME/prompts``, never a project's). Each command is described in
  ecc's ``commands`` section of ``AGENTS.md``: what ``/NAME ARGS`` means, with its prompt.
* **hooks** (translated): ``.codex/hooks.json``, in the shape of ecc's own hook (``{"hooks":
  {EVENT: [{"matcher", "hooks": [{"type": "command", "command", "timeout"}]}]}}``). Codex reads
  it only in a project the user trusts, and runs a new or changed hook only once the user
  trusted it (``/hooks``); until then ``codex exec`` skips it without a word.
"""

from __future__ import annotations

from ecc.adapterkit.surfaces import (
    agents_md_commands,
    agents_md_rules,
    hook_groups,
    hooks_table_merge,
)
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import SurfaceFile, SurfacePlan, SyncSource

__all__ = ["ecc_sync_surface"]

PROJECT_DOC_MAX_BYTES = 32 * 1024  # codex's default project_doc_max_bytes (0.171)
EVENTS = {
    "pre_tool": "PreToolUse",
    "post_tool": "PostToolUse",
    "session_start": "SessionStart",
    "session_end": "SessionEnd",
    "prompt_submit": "UserPromptSubmit",
}
TOOL_EVENTS = frozenset({"pre_tool", "post_tool"})
SESSION_END_MAX_SECS = 3  # codex clamps a SessionEnd hook's timeout to this (0.171)
HOOKS_NOTE = (
    "codex reads .codex/hooks.json only in a project you trust, and runs a new or changed hook"
    " only after you trust it (/hooks in codex); codex exec skips an untrusted hook silently"
)
COMMANDS_NOTE = (
    "codex has no custom commands (its user-level prompts were removed in 0.117): each command"
    " is described in AGENTS.md, so the agent follows '/NAME args' written in a prompt"
)


def _rules(source: SyncSource) -> SurfacePlan:
    body = agents_md_rules(source)
    if body is None:
        return SurfacePlan("native")
    plan = SurfacePlan("native", [SurfaceFile(source.project_dir / "AGENTS.md", section=body)])
    agents_is_source = source.instructions_path == source.project_dir / "AGENTS.md"
    size = len(body.encode("utf-8")) + len((agents_md_commands(source) or "").encode("utf-8"))
    if agents_is_source:
        size += len(source.instructions.encode("utf-8"))
    if size > PROJECT_DOC_MAX_BYTES:
        plan.notes.append(
            f"AGENTS.md would hold about {size} bytes, over codex's project_doc_max_bytes"
            f" ({PROJECT_DOC_MAX_BYTES}): codex truncates the rest; raise it in config.toml"
        )
    return plan


def _commands(source: SyncSource) -> SurfacePlan:
    body = agents_md_commands(source)
    files = [] if body is None else [SurfaceFile(source.project_dir / "AGENTS.md", section=body)]
    return SurfacePlan("instruction-only", files, [COMMANDS_NOTE])


def _hooks(source: SyncSource) -> SurfacePlan:
    path = source.project_dir / ".codex" / "hooks.json"
    notes = [HOOKS_NOTE]
    if any(
        h.event == "session_end" and h.timeout_secs > SESSION_END_MAX_SECS for h in source.hooks
    ):
        notes.append(f"codex allows a SessionEnd hook {SESSION_END_MAX_SECS} s at most")
    merge = hooks_table_merge(hook_groups(source.hooks, EVENTS, every_tool=""), path)
    return SurfacePlan("translated", [SurfaceFile(path, merge=merge)], notes)


@hookimpl
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    render = {"rules": _rules, "commands": _commands, "hooks": _hooks}.get(surface)
    return None if render is None else render(source)
