"""ecc adapter for the Gemini CLI: headless ``gemini --prompt=TASK -o stream-json``.

Command: ``gemini --output-format=stream-json --skip-trust [--model=M] [--include-directories=D]...
[--approval-mode=MODE] [--resume=SESSION_ID] --prompt=TASK``. The prompt is the value of
``--prompt`` in one ``--prompt=TASK`` element, emitted last (the reference's bare ``-p`` before
other flags relied on the parser), so a task starting with ``-`` stays the prompt.
``--skip-trust`` trusts the session directory for this run only: headless runs cannot answer the
trust dialog.

A managed session's hook (``launch.enforcement``) goes in through ``GEMINI_CLI_HOME``
(:func:`ecc_session_env`): a private home whose user settings are the user's own plus ecc's
``BeforeTool`` hook, the rest of ``~/.gemini`` linked in; a worktree whose ``.gemini/settings.json``
would switch the hook off is refused (see :mod:`ecc_adapter_gemini.sessionhooks`).

Profile: ``model``, ``add_dirs`` and ``permission_mode`` (as ``--approval-mode``, see
:data:`APPROVAL_MODES`) are flags; ``allowed_tools``, ``max_budget_usd``, ``append_system_prompt``
and ``token_budget`` are folded into the prompt. ``disallowed_tools`` is refused: the CLI has no
flag that removes a tool, and a sentence in the prompt would not stop the agent.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import ProfileFlags, marked, opt, profile_flags, render_task
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation
from ecc_adapter_gemini.output import parse_line

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.runtime.config.model import AgentProfile

NAME = "gemini"
PROGRAM = "gemini"
MARKERS = (".gemini", "GEMINI.md")
PROFILE_FIELDS = frozenset({"model", "add_dirs", "permission_mode"})
_NOT_FOLDED = PROFILE_FIELDS | {"disallowed_tools"}
# profile permission_mode (Claude's names and gemini's own) -> --approval-mode
APPROVAL_MODES = {
    "default": "default",
    "acceptEdits": "auto_edit",
    "auto_edit": "auto_edit",
    "bypassPermissions": "yolo",
    "yolo": "yolo",
    "plan": "plan",
}


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="Gemini CLI, headless prompt mode (stream-json output)",
        aliases=("gemini-cli",),
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
    for directory in profile.add_dirs:
        flags.add("--include-directories", directory)
    if profile.permission_mode:
        mode = APPROVAL_MODES.get(profile.permission_mode)
        if mode:
            flags.add("--approval-mode", mode)
        else:
            why = f"no gemini approval mode matches {profile.permission_mode!r}"
            flags.refuse_unknown("permission_mode", why, APPROVAL_MODES)
    if profile.disallowed_tools:
        why = "gemini has no flag that removes a tool; use permission_mode 'plan' (read-only)"
        flags.refuse("disallowed_tools", why)
    return flags.translation()


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "--output-format=stream-json", "--skip-trust"]
    argv += profile_flags(NAME, launch.profile, ecc_translate_profile)
    if resume_id:
        argv.append(opt("--resume", resume_id))
    return [*argv, opt("--prompt", render_task(launch.task, launch.profile, _NOT_FOLDED))]


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str]:
    return _argv(launch, None)


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str]:
    # gemini keeps sessions per project directory: the resume must run in the same directory.
    return _argv(launch, harness_session_id)


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str]:
    # Only an enforced session needs something of its own: the private home holding its hook.
    if launch.enforcement is None:
        return {}
    from ecc_adapter_gemini.sessionhooks import session_env

    return session_env(launch)


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent]:
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return marked(NAME, project_dir, MARKERS)


from ecc_adapter_gemini.integration import *  # noqa: E402,F403  (hooks + MCP integration)
from ecc_adapter_gemini.surfaces import *  # noqa: E402,F403  (ecc sync: rules, commands, hooks)
