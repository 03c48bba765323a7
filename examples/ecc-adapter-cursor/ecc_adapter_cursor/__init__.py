"""ecc adapter for the Cursor agent CLI (``cursor-agent -p``), written as any third party would."""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile
from ecc.hookspecs import hookimpl
from ecc.profiles import render_task
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation

NAME = "cursor"
PROGRAM = "cursor-agent"
MARKERS = (".cursor", ".cursorrules")
PROFILE_FIELDS = frozenset({"model"})


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="Cursor agent CLI in print mode",
        aliases=("cursor-agent",),
        capabilities=frozenset({"direct", "structured_output", "resume"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args = ["--model", profile.model] if profile.model else []
    return ProfileTranslation(args=args, prompt_prefix=render_task("", profile, PROFILE_FIELDS))


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "--print", "--output-format", "stream-json"]
    if resume_id:
        argv += ["--resume", resume_id]
    if launch.profile is not None and launch.profile.model:
        argv += ["--model", launch.profile.model]
    return [*argv, render_task(launch.task, launch.profile, PROFILE_FIELDS)]


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


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
