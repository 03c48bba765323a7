"""ecc adapter for the Gemini CLI: ``gemini -p TASK`` (the prompt is the value of ``-p``)."""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile
from ecc.hookspecs import hookimpl
from ecc.profiles import render_task
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation

NAME = "gemini"
MARKERS = (".gemini", "GEMINI.md")
PROFILE_FIELDS = frozenset({"model", "add_dirs"})


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program="gemini",
        description="Gemini CLI, non-interactive prompt mode",
        aliases=("gemini-cli",),
        capabilities=frozenset({"direct"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args: list[str] = []
    if profile.model:
        args += ["-m", profile.model]
    if profile.add_dirs:
        args += ["--include-directories", ",".join(profile.add_dirs)]
    return ProfileTranslation(args=args, prompt_prefix=render_task("", profile, PROFILE_FIELDS))


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    if harness != NAME:
        return None
    argv = ["gemini"]
    if launch.profile is not None:
        translation = ecc_translate_profile(NAME, launch.profile)
        assert translation is not None
        argv += translation.args
    # -p takes the prompt as its value: emit it last, as a pair (the reference's bare -p is fragile).
    return [*argv, "-p", render_task(launch.task, launch.profile, PROFILE_FIELDS)]


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
