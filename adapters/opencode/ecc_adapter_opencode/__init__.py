"""ecc adapter for OpenCode: ``opencode run --format=json`` in the session directory.

Command: ``opencode run --format=json --dir=DIR --title=ecc-ID [--model=M] [--auto|--agent=plan]
[--session=SESSION_ID] -- WORD...``: flag values as ``--flag=value`` and the task after ``--``,
split into space-free words (see :func:`prompt_words`).

Profile: ``model`` is a flag; ``permission_mode`` maps to ``--auto`` (``bypassPermissions``) or
the read-only ``plan`` agent (``plan``), ``default``/``acceptEdits`` keep OpenCode's own
permission settings; ``add_dirs``, ``allowed_tools``, ``max_budget_usd``,
``append_system_prompt`` and ``token_budget`` are folded into the prompt. ``disallowed_tools`` is
refused: ``opencode run`` has no flag that removes a tool, and a sentence in the prompt would not
stop the agent.

A managed session's hook (``launch.enforcement``) is a plugin module in the session's private
directory that OpenCode loads through ``OPENCODE_CONFIG_CONTENT`` (:func:`ecc_session_env`),
merged after the user's and the project's configs; a repository's config cannot remove it (see
:mod:`ecc_adapter_opencode.sessionhooks`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import ProfileFlags, marked, opt, profile_flags, render_task
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation
from ecc_adapter_opencode.output import parse_line

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.runtime.config.model import AgentProfile

NAME = "opencode"
PROGRAM = "opencode"
MARKERS = (".opencode", "opencode.json", "opencode.jsonc")
PROFILE_FIELDS = frozenset({"model", "permission_mode"})
_NOT_FOLDED = PROFILE_FIELDS | {"disallowed_tools"}
PERMISSION_FLAGS: dict[str, list[str]] = {
    "default": [],
    "acceptEdits": [],
    "bypassPermissions": ["--auto"],
    "auto": ["--auto"],
    "plan": ["--agent=plan"],
}


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="OpenCode CLI, non-interactive run mode (JSON events)",
        aliases=("open-code",),
        capabilities=frozenset(
            {
                "direct",
                "structured_output",
                "resume",
                "hooks",
                "enforcement",
                "session_hooks",
                "mcp",
                "skills",
            }
        ),
        profile_fields=PROFILE_FIELDS,
    )


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation:
    flags = ProfileFlags(profile, _NOT_FOLDED)
    if profile.model:
        flags.add("--model", profile.model)
    if profile.permission_mode:
        mode_flags = PERMISSION_FLAGS.get(profile.permission_mode)
        if mode_flags is None:
            why = f"no opencode equivalent of {profile.permission_mode!r}"
            flags.refuse_unknown("permission_mode", why, PERMISSION_FLAGS)
        else:
            flags.args += mode_flags
    if profile.disallowed_tools:
        why = "opencode run has no flag that removes a tool; deny it in opencode.json 'permission'"
        flags.refuse("disallowed_tools", why)
    return flags.translation()


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "run", "--format=json", opt("--dir", launch.working_dir)]
    argv.append(opt("--title", launch.session_name))
    argv += profile_flags(NAME, launch.profile, ecc_translate_profile)
    if resume_id:
        argv.append(opt("--session", resume_id))
    return [*argv, "--", *prompt_words(render_task(launch.task, launch.profile, _NOT_FOLDED))]


def prompt_words(prompt: str) -> list[str]:
    """The prompt as argv words that ``opencode run`` joins back into exactly ``prompt``.

    opencode joins its message words with spaces and wraps any word that contains a space in
    double quotes (escaping inner quotes), so a one-element prompt would reach the model quoted.
    Split on single spaces: no word has a space, and joining them restores the text exactly
    (runs of spaces give empty words; newlines and tabs stay inside words).
    """
    return prompt.split(" ")


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
    # Never let a headless run stall on opencode's background plugin install (real-harnesses.md).
    env = {"OPENCODE_DISABLE_AUTOUPDATE": "1"}
    if launch.enforcement is not None:
        from ecc_adapter_opencode.sessionhooks import session_env

        env.update(session_env(launch))
    return env


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent]:
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return marked(NAME, project_dir, MARKERS)


from ecc_adapter_opencode.integration import *  # noqa: E402,F403  (hooks + MCP integration)
from ecc_adapter_opencode.surfaces import *  # noqa: E402,F403  (ecc sync: rules, commands, hooks)
