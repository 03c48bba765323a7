"""Harnesses defined in config: ``[harness_runners.NAME]`` runs any agent CLI without code.

A runner for a name an adapter also declares (``claude``…) takes precedence over that adapter's
command builder, so an operator can pin flags or a wrapper script from config.
"""

from __future__ import annotations

from pathlib import Path

from ecc.config import AgentProfile, Config, HarnessRunner
from ecc.errors import EccError
from ecc.hookspecs import hookimpl
from ecc.profiles import format_number, render_task
from ecc.types import HarnessInfo, LaunchContext, ProfileTranslation


def _runner(harness: str, config: Config) -> HarnessRunner | None:
    return config.harness_runners.get(harness)


def _supported(runner: HarnessRunner) -> set[str]:
    flags = {
        "model": runner.model_flag,
        "add_dirs": runner.add_dir_flag or runner.include_directories_flag,
        "allowed_tools": runner.allowed_tools_flag,
        "disallowed_tools": runner.disallowed_tools_flag,
        "permission_mode": runner.permission_mode_flag,
        "max_budget_usd": runner.max_budget_usd_flag,
    }
    supported = {name for name, flag in flags.items() if flag}
    if runner.append_system_prompt_flag and not runner.inline_system_prompt_for_task:
        supported.add("append_system_prompt")
    return supported


@hookimpl
def ecc_harnesses(config: Config) -> list[HarnessInfo]:
    return [
        HarnessInfo(
            name=name,
            program=runner.program,
            description=f"[harness_runners.{name}] from config",
            capabilities=frozenset({"direct", "config_runner"} | ({"resume"} if runner.resume_flag else set())),
            profile_fields=frozenset(_supported(runner)),
        )
        for name, runner in config.harness_runners.items()
    ]


@hookimpl(tryfirst=True)
def ecc_translate_profile(
    harness: str, profile: AgentProfile, launch: LaunchContext
) -> ProfileTranslation | None:
    runner = _runner(harness, launch.config)
    if runner is None:
        return None
    args: list[str] = []
    if profile.model and runner.model_flag:
        args += [runner.model_flag, profile.model]
    if profile.add_dirs and runner.add_dir_flag:
        for directory in profile.add_dirs:
            args += [runner.add_dir_flag, directory]
    if profile.add_dirs and runner.include_directories_flag:
        args += [runner.include_directories_flag, ",".join(profile.add_dirs)]
    if profile.allowed_tools and runner.allowed_tools_flag:
        args += [runner.allowed_tools_flag, ",".join(profile.allowed_tools)]
    if profile.disallowed_tools and runner.disallowed_tools_flag:
        args += [runner.disallowed_tools_flag, ",".join(profile.disallowed_tools)]
    if profile.permission_mode and runner.permission_mode_flag:
        args += [runner.permission_mode_flag, profile.permission_mode]
    if profile.max_budget_usd is not None and runner.max_budget_usd_flag:
        args += [runner.max_budget_usd_flag, format_number(profile.max_budget_usd)]
    if profile.append_system_prompt and runner.append_system_prompt_flag:
        args += [runner.append_system_prompt_flag, profile.append_system_prompt]
    supported = _supported(runner)
    return ProfileTranslation(args=args, prompt_prefix=render_task("", profile, supported))


def _command(harness: str, launch: LaunchContext, resume_id: str | None) -> list[str] | None:
    runner = _runner(harness, launch.config)
    if runner is None:
        return None
    program = runner.program.strip()
    if not program:
        raise EccError(f"Configured harness runner for {harness} is missing a program")
    argv = [program, *(arg for arg in runner.base_args if arg.strip())]
    if runner.cwd_flag:
        argv += [runner.cwd_flag, str(launch.working_dir)]
    if runner.session_name_flag:
        argv += [runner.session_name_flag, launch.session_name]
    if resume_id and runner.resume_flag:
        argv += [runner.resume_flag, resume_id]
    task = launch.task
    if launch.profile is not None:
        translation = ecc_translate_profile(harness, launch.profile, launch)
        assert translation is not None
        argv += translation.args
        task = render_task(task, launch.profile, _supported(runner))
    if runner.task_flag:
        argv.append(runner.task_flag)
    argv.append(task)
    return argv


@hookimpl(tryfirst=True)
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    return _command(harness, launch, None)


@hookimpl(tryfirst=True)
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str] | None:
    return _command(harness, launch, harness_session_id)


@hookimpl(trylast=True)  # called last, so a runner's env overrides the others
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str] | None:
    runner = _runner(harness, launch.config)
    if runner is None:
        return None
    return {key: value for key, value in runner.env.items() if value.strip()}


@hookimpl
def ecc_detect_harness(project_dir: Path, config: Config) -> list[str]:
    return [
        name
        for name, runner in config.harness_runners.items()
        if any((project_dir / marker).exists() for marker in runner.project_markers)
    ]
