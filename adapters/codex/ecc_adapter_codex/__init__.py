"""ecc adapter for the OpenAI Codex CLI: ``codex exec --json`` in the session directory.

Command: ``codex exec --skip-git-repo-check SANDBOX --cd=DIR --color=never --json [--model=M]
[--add-dir=D]... -- PROMPT``; resume: ``codex exec resume --json --skip-git-repo-check SANDBOX
[--model=M] -- THREAD_ID PROMPT`` (``resume`` has no ``--cd``/``--sandbox``/``--add-dir``: the
runner's cwd is the session directory, and the sandbox and extra roots go through ``--config``).

Profile: ``model`` and ``add_dirs`` are flags; ``permission_mode`` picks the sandbox (see
:data:`SANDBOX`); ``allowed_tools``, ``max_budget_usd``, ``append_system_prompt`` and
``token_budget`` are folded into the prompt. ``disallowed_tools`` is refused: codex has no way to
take a tool away, and a sentence in the prompt would not stop the agent. A permission mode with no
sandbox equivalent is refused for the same reason.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import opt, refuse_if_any, render_task
from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation
from ecc_adapter_codex.output import parse_line

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.runtime.config.model import AgentProfile

NAME = "codex"
PROGRAM = "codex"
MARKERS = (".codex", ".codex-plugin")
# Fields with a real flag (or refused, so never folded into the prompt).
PROFILE_FIELDS = frozenset({"model", "add_dirs", "permission_mode"})
_NOT_FOLDED = PROFILE_FIELDS | {"disallowed_tools"}
DEFAULT_SANDBOX = "workspace-write"
BYPASS = "bypass"
# profile permission_mode (Claude's names and codex's own) -> codex sandbox mode
SANDBOX = {
    "plan": "read-only",
    "read-only": "read-only",
    "default": "workspace-write",
    "acceptEdits": "workspace-write",
    "auto": "workspace-write",
    "workspace-write": "workspace-write",
    "danger-full-access": "danger-full-access",
    "bypassPermissions": BYPASS,
}


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="OpenAI Codex CLI, non-interactive exec mode (--json events)",
        aliases=("openai-codex",),
        capabilities=frozenset(
            {"direct", "structured_output", "resume", "hooks", "enforcement", "mcp", "skills"}
        ),
        profile_fields=PROFILE_FIELDS,
    )


def _sandbox(profile: AgentProfile | None) -> str:
    if profile is None or not profile.permission_mode:
        return DEFAULT_SANDBOX
    return SANDBOX.get(profile.permission_mode, "")


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation | None:
    if harness != NAME:
        return None
    args: list[str] = []
    refused: dict[str, str] = {}
    if profile.model:
        args.append(opt("--model", profile.model))
    for directory in profile.add_dirs:
        args.append(opt("--add-dir", directory))
    if profile.permission_mode and not _sandbox(profile):
        refused["permission_mode"] = (
            f"no codex sandbox matches {profile.permission_mode!r} (known: "
            + ", ".join(SANDBOX)
            + ")"
        )
    if profile.disallowed_tools:
        refused["disallowed_tools"] = (
            "codex cannot take tools away; use permission_mode 'plan' (read-only sandbox)"
        )
    return ProfileTranslation(
        args=args, prompt_prefix=render_task("", profile, _NOT_FOLDED), refused=refused
    )


def _prompt(launch: LaunchContext) -> str:
    if launch.task.strip() == "-":
        raise EccError("codex reads a prompt of '-' from stdin; give the task as text")
    return render_task(launch.task, launch.profile, _NOT_FOLDED)


def _translation(launch: LaunchContext) -> ProfileTranslation:
    if launch.profile is None:
        return ProfileTranslation()
    translation = ecc_translate_profile(NAME, launch.profile)
    assert translation is not None
    refuse_if_any(NAME, translation)
    return translation


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str] | None:
    if harness != NAME:
        return None
    translation = _translation(launch)
    sandbox = _sandbox(launch.profile)
    argv = [PROGRAM, "exec", "--skip-git-repo-check"]
    if sandbox == BYPASS:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv.append(opt("--sandbox", sandbox))
    argv += [opt("--cd", launch.working_dir), "--color=never", "--json"]
    return [*argv, *translation.args, "--", _prompt(launch)]


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str] | None:
    if harness != NAME:
        return None
    if not harness_session_id:
        return ecc_build_command(harness, launch)  # nothing to continue: run the task again
    _translation(launch)  # refusals apply to a resume too
    profile = launch.profile
    sandbox = _sandbox(profile)
    argv = [PROGRAM, "exec", "resume", "--json", "--skip-git-repo-check"]
    if sandbox == BYPASS:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv.append(opt("--config", f"sandbox_mode={json.dumps(sandbox)}"))
    if profile is not None and profile.model:
        argv.append(opt("--model", profile.model))
    if profile is not None and profile.add_dirs:
        roots = [str(Path(launch.working_dir) / d) for d in profile.add_dirs]
        argv.append(opt("--config", f"sandbox_workspace_write.writable_roots={json.dumps(roots)}"))
    return [*argv, "--", harness_session_id, _prompt(launch)]


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str] | None:
    # codex needs nothing of its own: CODEX_HOME stays the user's, the core adds ECC_*.
    return {} if harness == NAME else None


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent] | None:
    if harness != NAME:
        return None
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return NAME if any((project_dir / marker).exists() for marker in MARKERS) else None


from ecc_adapter_codex.integration import *  # noqa: E402,F403  (hooks + MCP integration)
