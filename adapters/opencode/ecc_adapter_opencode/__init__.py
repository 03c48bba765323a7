"""ecc adapter for OpenCode: ``opencode run`` with the session directory and title."""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile
from ecc.hookspecs import hookimpl
from ecc.profiles import render_task
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation

NAME = "opencode"
MARKERS = (".opencode", "opencode.json")
PROFILE_FIELDS = frozenset({"model"})


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program="opencode",
        description="OpenCode CLI, non-interactive run mode",
        capabilities=frozenset({"direct"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args = ["--model", profile.model] if profile.model else []
    return ProfileTranslation(args=args, prompt_prefix=render_task("", profile, PROFILE_FIELDS))


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    if harness != NAME:
        return None
    argv = ["opencode", "run", "--dir", str(launch.working_dir), "--title", launch.session_name]
    if launch.profile is not None and launch.profile.model:
        argv += ["--model", launch.profile.model]
    return [*argv, render_task(launch.task, launch.profile, PROFILE_FIELDS)]


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
