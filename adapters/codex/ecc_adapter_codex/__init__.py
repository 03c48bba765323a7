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

A managed session's hook (``launch.enforcement``) goes into both commands as two ``--config``
overrides (:mod:`ecc_adapter_codex.sessionhooks`): ecc's ``PreToolUse`` hook in codex's
session-flags layer, and that hook's trust (``hooks.state``, keyed and hashed as codex does), so
codex runs it without ``/hooks`` review or ``--dangerously-bypass-hook-trust``, and no other hook
gains trust. ``CODEX_HOME`` stays the user's, so auth, config and ``exec resume`` are unchanged.
The session's MCP servers (``launch.mcp_servers``) go in the same way, as ``mcp_servers.NAME``
overrides passing the variables that bind them by name (codex filters what its MCP servers
inherit).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import ProfileFlags, marked, opt, profile_flags, render_task
from ecc.contract.errors import EccError
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation
from ecc_adapter_codex.output import parse_line
from ecc_adapter_codex.sessionhooks import config_overrides, mcp_overrides

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
            {
                "direct",
                "structured_output",
                "resume",
                "hooks",
                "enforcement",
                "session_hooks",
                "session_mcp",
                "mcp",
                "skills",
            }
        ),
        profile_fields=PROFILE_FIELDS,
    )


def _sandbox(profile: AgentProfile | None) -> str:
    if profile is None or not profile.permission_mode:
        return DEFAULT_SANDBOX
    return SANDBOX.get(profile.permission_mode, "")


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation:
    flags = ProfileFlags(profile, _NOT_FOLDED)
    if profile.model:
        flags.add("--model", profile.model)
    for directory in profile.add_dirs:
        flags.add("--add-dir", directory)
    if profile.permission_mode and not _sandbox(profile):
        why = f"no codex sandbox matches {profile.permission_mode!r}"
        flags.refuse_unknown("permission_mode", why, SANDBOX)
    if profile.disallowed_tools:
        why = "codex cannot take tools away; use permission_mode 'plan' (read-only sandbox)"
        flags.refuse("disallowed_tools", why)
    return flags.translation()


def _session_hooks(launch: LaunchContext) -> list[str]:
    """The ``--config`` overrides applying the managed session's hook and MCP servers."""
    overrides = mcp_overrides(launch.mcp_servers)
    if launch.enforcement is not None:
        overrides = [*config_overrides(launch.enforcement), *overrides]
    return [opt("--config", override) for override in overrides]


def _prompt(launch: LaunchContext) -> str:
    if launch.task.strip() == "-":
        raise EccError("codex reads a prompt of '-' from stdin; give the task as text")
    return render_task(launch.task, launch.profile, _NOT_FOLDED)


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str]:
    flags = profile_flags(NAME, launch.profile, ecc_translate_profile)
    sandbox = _sandbox(launch.profile)
    argv = [PROGRAM, "exec", "--skip-git-repo-check"]
    if sandbox == BYPASS:
        argv.append("--dangerously-bypass-approvals-and-sandbox")
    else:
        argv.append(opt("--sandbox", sandbox))
    argv += [opt("--cd", launch.working_dir), "--color=never", "--json"]
    return [*argv, *_session_hooks(launch), *flags, "--", _prompt(launch)]


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str]:
    if not harness_session_id:
        return ecc_build_command(harness, launch)  # nothing to continue: run the task again
    profile_flags(NAME, launch.profile, ecc_translate_profile)  # refusals apply to a resume too
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
    return [*argv, *_session_hooks(launch), "--", harness_session_id, _prompt(launch)]


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str]:
    # codex needs nothing of its own: CODEX_HOME stays the user's (the session's hook goes in
    # through --config), the core adds ECC_*.
    return {}


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent]:
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return marked(NAME, project_dir, MARKERS)


from ecc_adapter_codex.integration import *  # noqa: E402,F403  (hooks + MCP integration)
from ecc_adapter_codex.surfaces import *  # noqa: E402,F403  (ecc sync: rules, commands, hooks)
