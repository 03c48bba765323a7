"""ecc adapter for the OpenAI Codex CLI: ``codex exec`` runs in the session directory."""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile
from ecc.hookspecs import hookimpl
from ecc.profiles import render_task
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation

NAME = "codex"
MARKERS = (".codex", ".codex-plugin", "AGENTS.md")
PROFILE_FIELDS = frozenset({"model", "add_dirs"})


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program="codex",
        description="OpenAI Codex CLI, non-interactive exec mode",
        capabilities=frozenset({"direct"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args: list[str] = []
    if profile.model:
        args += ["--model", profile.model]
    for directory in profile.add_dirs:
        args += ["--add-dir", directory]
    return ProfileTranslation(args=args, prompt_prefix=render_task("", profile, PROFILE_FIELDS))


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    if harness != NAME:
        return None
    argv = ["codex", "exec", "--skip-git-repo-check", "--sandbox", "workspace-write"]
    argv += ["--cd", str(launch.working_dir), "--color", "never"]
    if launch.profile is not None:
        translation = ecc_translate_profile(NAME, launch.profile)
        assert translation is not None
        argv += translation.args
    return [*argv, render_task(launch.task, launch.profile, PROFILE_FIELDS)]


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
