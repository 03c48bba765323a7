"""ecc adapter for Claude Code: ``claude --print`` runs, profiles as real flags, ``--resume``."""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile
from ecc.hookspecs import hookimpl
from ecc.profiles import format_number
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation

NAME = "claude"
MARKERS = (".claude", "CLAUDE.md")
PROFILE_FIELDS = frozenset(
    {
        "model",
        "allowed_tools",
        "disallowed_tools",
        "permission_mode",
        "add_dirs",
        "max_budget_usd",
        "append_system_prompt",
    }
)


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program="claude",
        description="Claude Code CLI in print mode",
        aliases=("claude-code",),
        capabilities=frozenset({"direct", "resume"}),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args: list[str] = []
    if profile.model:
        args += ["--model", profile.model]
    if profile.allowed_tools:
        args += ["--allowed-tools", ",".join(profile.allowed_tools)]
    if profile.disallowed_tools:
        args += ["--disallowed-tools", ",".join(profile.disallowed_tools)]
    if profile.permission_mode:
        args += ["--permission-mode", profile.permission_mode]
    for directory in profile.add_dirs:
        args += ["--add-dir", directory]
    if profile.max_budget_usd is not None:
        args += ["--max-budget-usd", format_number(profile.max_budget_usd)]
    if profile.append_system_prompt:
        args += ["--append-system-prompt", profile.append_system_prompt]
    return ProfileTranslation(args=args)


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = ["claude", "--print", "--name", launch.session_name]
    if resume_id:
        argv += ["--resume", resume_id]
    if launch.profile is not None:
        translation = ecc_translate_profile(NAME, launch.profile)
        assert translation is not None
        argv += translation.args
    return [*argv, launch.task]


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
    if harness != NAME:
        return None
    env = {
        "CLAUDE_SESSION_ID": launch.session_id,
        "CLAUDE_PROJECT_DIR": str(launch.working_dir),
        "CLAUDE_CODE_ENTRYPOINT": "cli",
    }
    if launch.profile is not None and launch.profile.model:
        env["CLAUDE_MODEL"] = launch.profile.model
    return env


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None
