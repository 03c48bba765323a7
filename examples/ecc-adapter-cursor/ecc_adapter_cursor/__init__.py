"""ecc adapter for the Cursor agent CLI (``cursor-agent -p``), written as any third party would.

Command: ``cursor-agent --print --output-format=stream-json [--resume=ID] [--model=M] [--force]
-- TASK``. Every value is one ``--flag=value`` element and the task follows ``--``, so a task or
profile value starting with ``-`` is never read as a flag. ``permission_mode`` ``bypassPermissions``
maps to ``--force`` (run commands without asking); other modes and ``disallowed_tools`` are
refused (the CLI cannot enforce them); the rest is folded into the prompt.

``ecc sync``: each shared rule becomes a Cursor project rule, ``.cursor/rules/NAME.mdc`` applied
to every request (``alwaysApply: true``); Cursor reads ``AGENTS.md`` by itself. This example
syncs no commands or hooks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import (
    ProfileFlags,
    as_int,
    marked,
    opt,
    parse_json_line,
    profile_flags,
    render_task,
    table,
)
from ecc.adapterkit.events import error, final, harness_session, usage
from ecc.adapterkit.surfaces import front_matter
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import (
    HarnessInfo,
    LaunchContext,
    OutputEvent,
    ProfileTranslation,
    SurfaceFile,
    SurfacePlan,
    SyncSource,
)

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.runtime.config.model import AgentProfile

NAME = "cursor"
PROGRAM = "cursor-agent"
MARKERS = (".cursor", ".cursorrules")
PROFILE_FIELDS = frozenset({"model", "permission_mode"})
_NOT_FOLDED = PROFILE_FIELDS | {"disallowed_tools"}


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="Cursor agent CLI in print mode (stream-json output)",
        aliases=("cursor-agent",),
        capabilities=frozenset({"direct", "structured_output", "resume"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation:
    flags = ProfileFlags(profile, _NOT_FOLDED)
    if profile.model:
        flags.add("--model", profile.model)
    if profile.permission_mode == "bypassPermissions":
        flags.args.append("--force")
    elif profile.permission_mode and profile.permission_mode != "default":
        flags.refuse("permission_mode", "cursor-agent knows only default and bypassPermissions")
    if profile.disallowed_tools:
        flags.refuse("disallowed_tools", "cursor-agent has no flag that removes a tool")
    return flags.translation()


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "--print", "--output-format=stream-json"]
    if resume_id:
        argv.append(opt("--resume", resume_id))
    argv += profile_flags(NAME, launch.profile, ecc_translate_profile)
    return [*argv, "--", render_task(launch.task, launch.profile, _NOT_FOLDED)]


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str]:
    return _argv(launch, None)


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str]:
    return _argv(launch, harness_session_id)


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str]:
    return {"CURSOR_AGENT_SESSION": launch.session_name}


def parse_line(line: str) -> list[OutputEvent]:
    """One stream-json line: ``system/init``, ``tool_call/started``, ``result`` (never raises)."""
    data = parse_json_line(line)
    if data is None:
        return []
    events: list[OutputEvent] = []
    kind = data.get("type")
    if kind == "system":
        events += harness_session(data.get("session_id"))
    elif kind == "tool_call" and data.get("subtype") == "started":
        call = table(data.get("tool_call"))
        for tool, body in call.items():  # e.g. {"shellToolCall": {"args": {"command": ...}}}
            args = body.get("args") if isinstance(body, dict) else None
            events.append(
                OutputEvent(
                    "tool_call",
                    {"tool": str(tool), "input": args if isinstance(args, dict) else {}},
                )
            )
    elif kind == "result":
        tokens = table(data.get("usage"))
        if tokens:
            input_tokens, output_tokens = tokens.get("input_tokens"), tokens.get("output_tokens")
            events.append(usage(as_int(input_tokens), as_int(output_tokens), cumulative=False))
        result = data.get("result")
        if data.get("is_error"):
            events.append(error(result))
        elif isinstance(result, str):
            events.append(final(result))
    return events


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent]:
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return marked(NAME, project_dir, MARKERS)


def _rule(path: Path, description: str, text: str) -> SurfaceFile:
    fields = {"description": description, "alwaysApply": "true"}
    return SurfaceFile(path, content=front_matter(fields) + text)


@hookimpl
def ecc_sync_surface(harness: str, surface: str, source: SyncSource) -> SurfacePlan | None:
    if surface in ("commands", "hooks"):
        return SurfacePlan("unsupported", notes=[f"this example adapter syncs no {surface}"])
    if surface != "rules":
        return None
    folder = source.project_dir / ".cursor" / "rules"
    files = [_rule(folder / f"{r.name}.mdc", r.description, r.text) for r in source.rules]
    plan = SurfacePlan("translated", files, ["Cursor reads AGENTS.md by itself"])
    other = source.instructions_path not in (None, source.project_dir / "AGENTS.md")
    if other and source.instructions.strip():
        # a rule's name never holds a dot, so this file cannot be one of theirs
        path = folder / "ecc.instructions.mdc"
        files.append(_rule(path, "The project's shared instructions", source.instructions))
    return plan
