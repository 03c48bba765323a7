"""ecc adapter for the Cursor agent CLI (``cursor-agent -p``), written as any third party would.

Command: ``cursor-agent --print --output-format=stream-json [--resume=ID] [--model=M] [--force]
-- TASK``. Every value is one ``--flag=value`` element and the task follows ``--``, so a task or
profile value starting with ``-`` is never read as a flag. ``permission_mode`` ``bypassPermissions``
maps to ``--force`` (run commands without asking); other modes and ``disallowed_tools`` are
refused (the CLI cannot enforce them); the rest is folded into the prompt.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import (
    as_int,
    opt,
    parse_json_line,
    refuse_if_any,
    render_task,
)
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation

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
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args: list[str] = []
    refused: dict[str, str] = {}
    if profile.model:
        args.append(opt("--model", profile.model))
    if profile.permission_mode == "bypassPermissions":
        args.append("--force")
    elif profile.permission_mode and profile.permission_mode != "default":
        refused["permission_mode"] = "cursor-agent knows only default and bypassPermissions"
    if profile.disallowed_tools:
        refused["disallowed_tools"] = "cursor-agent has no flag that removes a tool"
    return ProfileTranslation(
        args=args, prompt_prefix=render_task("", profile, _NOT_FOLDED), refused=refused
    )


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "--print", "--output-format=stream-json"]
    if resume_id:
        argv.append(opt("--resume", resume_id))
    if launch.profile is not None:
        translation = ecc_translate_profile(NAME, launch.profile)
        assert translation is not None
        refuse_if_any(NAME, translation)
        argv += translation.args
    return [*argv, "--", render_task(launch.task, launch.profile, _NOT_FOLDED)]


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    return _argv(launch, None) if harness == NAME else None


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str] | None:
    return _argv(launch, harness_session_id) if harness == NAME else None


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str] | None:
    return {"CURSOR_AGENT_SESSION": launch.session_name} if harness == NAME else None


def parse_line(line: str) -> list[OutputEvent]:
    """One stream-json line: ``system/init``, ``tool_call/started``, ``result`` (never raises)."""
    data = parse_json_line(line)
    if data is None:
        return []
    events: list[OutputEvent] = []
    kind = data.get("type")
    sid = data.get("session_id")
    if kind == "system" and isinstance(sid, str) and sid:
        events.append(OutputEvent("harness_session", {"id": sid}))
    elif kind == "tool_call" and data.get("subtype") == "started":
        call = data.get("tool_call") if isinstance(data.get("tool_call"), dict) else {}
        for tool, body in call.items():  # e.g. {"shellToolCall": {"args": {"command": ...}}}
            args = body.get("args") if isinstance(body, dict) else None
            events.append(
                OutputEvent(
                    "tool_call",
                    {"tool": str(tool), "input": args if isinstance(args, dict) else {}},
                )
            )
    elif kind == "result":
        usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
        if usage:
            events.append(
                OutputEvent(
                    "usage",
                    {
                        "input_tokens": as_int(usage.get("input_tokens")),
                        "output_tokens": as_int(usage.get("output_tokens")),
                        "cost_usd": None,
                        "cumulative": False,
                    },
                )
            )
        result = data.get("result")
        if data.get("is_error"):
            events.append(OutputEvent("error", {"message": str(result or "error")}))
        elif isinstance(result, str):
            events.append(OutputEvent("final", {"text": result}))
    return events


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent] | None:
    if harness != NAME:
        return None
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
