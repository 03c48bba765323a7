"""Harnesses defined in config: ``[harness_runners.NAME]`` runs any agent CLI without code.

A runner for a name an adapter also declares (``claude``…) takes precedence over that adapter's
command builder, so an operator can pin flags or a wrapper script from config.

Argument order (spec §2.3): ``program base_args… [cwd_flag DIR] [session_name_flag ecc-ID]
[resume_flag ID] [profile flags…] [task_flag] TASK``. A runner's flag syntax is unknown, so
values are passed as ``flag value`` pairs; to keep them from being read as flags, a profile value
starting with ``-`` is refused, a task starting with ``-`` is refused after ``task_flag`` and put
after ``--`` when it is positional. The system prompt is sent once: through
``append_system_prompt_flag`` when ``inline_system_prompt_for_task`` is false, else inlined in
the task (the reference sent it both ways).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import ProfileFlags, format_number, profile_flags, render_task
from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, ProfileTranslation

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.contract.types import Config
    from ecc.runtime.config.model import AgentProfile, HarnessRunner


def _runner(harness: str, config: Config) -> HarnessRunner | None:
    runner = config.harness_runners.get(harness)
    if runner is None:  # keys are matched case-insensitively (the reference's were not)
        for name, candidate in config.harness_runners.items():
            if name.strip().lower() == harness:
                return candidate
    return runner


def _pair(harness: str, flag: str, value: str, what: str) -> list[str]:
    if value.startswith("-"):
        raise EccError(
            f"harness runner {harness}: {what} {value!r} starts with '-' and could be read as a "
            "flag"
        )
    return [flag, value]


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
            name=name.strip().lower(),
            program=runner.program,
            description=f"[harness_runners.{name}] from config",
            capabilities=frozenset(
                {"direct", "config_runner"} | ({"resume"} if runner.resume_flag else set())
            ),
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
    supported = _supported(runner)
    flags = ProfileFlags(profile, supported)

    def add(field: str, flag: str, value: str) -> None:
        try:
            flags.args.extend(_pair(harness, flag, value, field))
        except EccError as exc:
            flags.refuse(field, str(exc))

    if profile.model and runner.model_flag:
        add("model", runner.model_flag, profile.model)
    if profile.add_dirs and runner.add_dir_flag:
        for directory in profile.add_dirs:
            add("add_dirs", runner.add_dir_flag, directory)
    if profile.add_dirs and runner.include_directories_flag:
        add("add_dirs", runner.include_directories_flag, ",".join(profile.add_dirs))
    if profile.allowed_tools and runner.allowed_tools_flag:
        add("allowed_tools", runner.allowed_tools_flag, ",".join(profile.allowed_tools))
    if profile.disallowed_tools and runner.disallowed_tools_flag:
        add("disallowed_tools", runner.disallowed_tools_flag, ",".join(profile.disallowed_tools))
    if profile.permission_mode and runner.permission_mode_flag:
        add("permission_mode", runner.permission_mode_flag, profile.permission_mode)
    if profile.max_budget_usd is not None and runner.max_budget_usd_flag:
        add("max_budget_usd", runner.max_budget_usd_flag, format_number(profile.max_budget_usd))
    if profile.append_system_prompt and "append_system_prompt" in supported:
        assert runner.append_system_prompt_flag
        add("append_system_prompt", runner.append_system_prompt_flag, profile.append_system_prompt)
    return flags.translation()


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
        argv += _pair(harness, runner.resume_flag, resume_id, "harness session id")
    argv += profile_flags(
        harness, launch.profile, lambda name, profile: ecc_translate_profile(name, profile, launch)
    )
    task = render_task(launch.task, launch.profile, _supported(runner))
    if runner.task_flag:
        argv += _pair(harness, runner.task_flag, task, "task")
    elif task.startswith("-"):
        argv += ["--", task]  # end of options: understood by getopt, argparse, click, yargs...
    else:
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


def _marker_present(project_dir: Path, marker: str) -> bool:
    path = Path(marker)
    if not marker.strip() or path.is_absolute() or ".." in path.parts:
        return False  # markers are relative to the project, never outside it
    return (project_dir / path).exists()


@hookimpl
def ecc_detect_harness(project_dir: Path, config: Config) -> list[str]:
    return [
        name.strip().lower()
        for name, runner in config.harness_runners.items()
        if any(_marker_present(project_dir, marker) for marker in runner.project_markers)
    ]
