"""Pure helpers adapters share to render ``ecc sync``'s surfaces (``ecc_sync_surface``).

Several harnesses read the same file (codex and OpenCode both read ``AGENTS.md``): the core
writes one section given identically by several harnesses once, and refuses two different
versions, so every adapter renders ``AGENTS.md``'s sections with these functions.

A project hook ecc writes into a shared hook config carries :data:`SYNC_MARK` at the end of its
command, so a later merge replaces or removes exactly the entries a sync wrote; ecc's own risk
hook (``… ecc hook --harness NAME``) never carries it.
"""

from __future__ import annotations

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from ecc.contract.types import SyncSource

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


def agents_md_rules(source: SyncSource) -> str | None:
    """ecc's ``rules`` section of ``AGENTS.md``: the shared instructions (when another file
    holds them) and every rule, or None when there is nothing to add to ``AGENTS.md``."""
    instructions = _shared_instructions(source)
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
