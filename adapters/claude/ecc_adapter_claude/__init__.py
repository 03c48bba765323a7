"""ecc adapter for Claude Code: ``claude --print`` runs, every profile field a real flag.

Command: ``claude --print --verbose --output-format=stream-json --name=ecc-ID [profile flags]
-- TASK``. Every flag value is one ``--flag=value`` argv element and the task follows ``--``, so
neither a task nor a profile value starting with ``-`` can be read as a flag. Resume adds
``--resume=HARNESS_SESSION_ID`` (the ``session_id`` of the stream's ``system/init`` line).
``token_budget`` has no flag: ecc enforces it from the parsed usage.

A managed session's hook (``launch.enforcement``) goes in through ``--settings=FILE``: a settings
file in the session's private directory with ecc's ``PreToolUse`` hook and ``disableAllHooks``
false. Command-line settings rank above the project's and the user's, so neither a repository's
``.claude/settings.json`` nor the user's own can switch it off. The session's MCP servers
(``launch.mcp_servers``: ecc's sessions server) go in through ``--mcp-config=FILE``, a file in
the same directory; their tools appear as ``mcp__ecc-sessions__TOOL``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ecc.adapterkit import ProfileFlags, format_number, marked, opt, profile_flags
from ecc.adapterkit.sessionhooks import (
    hooks_table,
    mcp_servers_table,
    write_private,
    write_settings,
)
from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import HarnessInfo, LaunchContext, OutputEvent, ProfileTranslation
from ecc_adapter_claude.output import parse_line

if TYPE_CHECKING:  # pydantic stays off the hot paths that load adapters
    from ecc.runtime.config.model import AgentProfile

NAME = "claude"
PROGRAM = "claude"
MARKERS = (".claude", "CLAUDE.md")
PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan")
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
PACKAGE_MANAGERS = ("npm", "pnpm", "yarn", "bun")


@hookimpl
def ecc_harnesses() -> HarnessInfo:
    return HarnessInfo(
        name=NAME,
        program=PROGRAM,
        description="Claude Code CLI in print mode (stream-json output)",
        aliases=("claude-code",),
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


@hookimpl
def ecc_translate_profile(harness: str, profile: AgentProfile) -> ProfileTranslation:
    flags = ProfileFlags(profile)  # every field has a flag: nothing is folded
    if profile.model:
        flags.add("--model", profile.model)
    if profile.allowed_tools:
        flags.add("--allowed-tools", ",".join(profile.allowed_tools))
    if profile.disallowed_tools:
        flags.add("--disallowed-tools", ",".join(profile.disallowed_tools))
    mode = profile.permission_mode
    if mode in PERMISSION_MODES:
        flags.add("--permission-mode", mode)
    elif mode:
        accepted = ", ".join(PERMISSION_MODES)
        flags.refuse("permission_mode", f"unknown mode {mode!r} (claude accepts {accepted})")
    for directory in profile.add_dirs:
        flags.add("--add-dir", directory)
    if profile.max_budget_usd is not None:
        flags.add("--max-budget-usd", format_number(profile.max_budget_usd))
    if profile.append_system_prompt:
        flags.add("--append-system-prompt", profile.append_system_prompt)
    return flags.translation()


def _argv(launch: LaunchContext, resume_id: str | None) -> list[str]:
    argv = [PROGRAM, "--print", "--verbose", "--output-format=stream-json"]
    argv.append(opt("--name", launch.session_name))
    if resume_id:
        argv.append(opt("--resume", resume_id))
    if launch.enforcement is not None:
        settings = {
            "disableAllHooks": False,
            "hooks": hooks_table(launch.enforcement, "PreToolUse"),
        }
        argv.append(opt("--settings", write_settings(launch.enforcement, "claude.json", settings)))
    argv += _mcp_config(launch)
    argv += profile_flags(NAME, launch.profile, ecc_translate_profile)
    return [*argv, "--", launch.task]


def _mcp_config(launch: LaunchContext) -> list[str]:
    """``--mcp-config=FILE`` registering the session's MCP servers (ecc's sessions server)."""
    servers = launch.mcp_servers
    if not servers or servers[0].directory is None:
        return []
    table = {"mcpServers": mcp_servers_table(servers)}
    return [opt("--mcp-config", write_private(servers[0].directory, "claude-mcp.json", table))]


@hookimpl
def ecc_build_command(harness: str, launch: LaunchContext) -> list[str]:
    return _argv(launch, None)


@hookimpl
def ecc_resume_command(
    harness: str, launch: LaunchContext, harness_session_id: str | None
) -> list[str]:
    # Without a captured session id there is nothing to continue: the task runs again.
    return _argv(launch, harness_session_id)


def _package_manager_from(path: Path, key: str) -> str | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, str):
        name = value.split("@", 1)[0].strip()
        if name in PACKAGE_MANAGERS:
            return name
    return None


def detect_package_manager(working_dir: Path, home: Path | None = None) -> str:
    """The project's package manager, in the reference's order of evidence; ``npm`` by default."""
    from_env = os.environ.get("CLAUDE_PACKAGE_MANAGER", "").split("@", 1)[0].strip()
    if from_env in PACKAGE_MANAGERS:
        return from_env
    for path, key in (
        (working_dir / ".claude" / "package-manager.json", "packageManager"),
        (working_dir / "package.json", "packageManager"),
    ):
        found = _package_manager_from(path, key)
        if found:
            return found
    for lockfile, name in (
        ("pnpm-lock.yaml", "pnpm"),
        ("bun.lockb", "bun"),
        ("yarn.lock", "yarn"),
        ("package-lock.json", "npm"),
    ):
        if (working_dir / lockfile).exists():
            return name
    home = home if home is not None else Path.home()
    return _package_manager_from(home / ".claude" / "package-manager.json", "packageManager") or (
        "npm"
    )


@hookimpl
def ecc_session_env(harness: str, launch: LaunchContext) -> dict[str, str]:
    manager = detect_package_manager(Path(launch.working_dir))
    env = {
        "CLAUDE_SESSION_ID": launch.session_id,
        "CLAUDE_PROJECT_DIR": str(launch.working_dir),
        "CLAUDE_CODE_ENTRYPOINT": "cli",
        "CLAUDE_PACKAGE_MANAGER": manager,
        "CLAUDE_CODE_PACKAGE_MANAGER": manager,
    }
    if launch.profile is not None and launch.profile.model:
        env["CLAUDE_MODEL"] = launch.profile.model
    if launch.mcp_servers:  # connect ecc's servers before the first turn: their tools are there
        env["MCP_CONNECTION_NONBLOCKING"] = "0"
    return env


@hookimpl
def ecc_parse_output_line(harness: str, line: str, stream: str) -> list[OutputEvent]:
    return parse_line(line) if stream == "stdout" else []


@hookimpl
def ecc_detect_harness(project_dir: Path) -> str | None:
    return marked(NAME, project_dir, MARKERS)


from ecc_adapter_claude.integration import *  # noqa: E402,F403  (hooks + MCP integration)
from ecc_adapter_claude.surfaces import *  # noqa: E402,F403  (ecc sync: rules, commands, hooks)
