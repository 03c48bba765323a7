"""Claude Code integration: ecc's ``PreToolUse`` hook, its MCP server and skills.

Installed into ``<project>/.claude/settings.json`` (``--project``) or ``~/.claude/settings.json``
(``--user``) as ``{"hooks": {"PreToolUse": [{"matcher": "*", "hooks": [{"type": "command",
"command": "… ecc hook --harness claude"}]}]}}``. Claude Code sends the payload on stdin
(``hook_event_name``, ``tool_name``, ``tool_input``, ``session_id``, ``cwd``, ``tool_use_id``).
Answers: exit 0 allows; exit 2 with the reason on stderr denies (the model sees the reason);
``ask`` is the JSON ``hookSpecificOutput.permissionDecision = "ask"`` on stdout.

MCP: ``ecc-memory`` in ``mcpServers`` of ``<project>/.mcp.json`` (project) or ``~/.claude.json``
(user), ``{"type": "stdio", "command", "args", "env": {"ECC_MEMORY_HARNESS": "claude"}}``.
Skills: ``<project>/.claude/skills/<name>/`` or ``~/.claude/skills/<name>/``.

Loaded on its own by ``ecc hook``'s hot path: it imports nothing from its package.
"""

from __future__ import annotations

from ecc.adapterkit import install
from ecc.adapterkit.hooks import HookProtocol
from ecc.contract.markers import hookimpl  # without the specs module (ecc hook)
from ecc.contract.types import (
    HookDecision,
    HookEvent,
    HookResponse,
    IntegrationRequest,
    IntegrationResult,
)

TYPE_CHECKING = False  # typing and pathlib stay unimported: ecc hook loads this module
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

__all__ = ["ecc_hook_response", "ecc_install_integration", "ecc_parse_hook_payload"]

NAME = "claude"
PROTOCOL = HookProtocol(
    NAME,
    phases={"PreToolUse": "pre_tool", "PostToolUse": "post_tool"},
    kinds={
        "bash": "shell",
        "write": "write",
        "edit": "edit",
        "multiedit": "edit",
        "notebookedit": "edit",
        "read": "read",
        "grep": "search",
        "glob": "search",
        "ls": "search",
        "webfetch": "fetch",
        "websearch": "fetch",
    },
    mcp_prefix="mcp__",
    ask_event="PreToolUse",
)
APPROVE_MCP = (
    "Claude Code asks you to approve a project's .mcp.json servers when it starts"
    ' (or list "ecc-memory" in enabledMcpjsonServers of .claude/settings.local.json).'
)


def settings_file(request: IntegrationRequest) -> Path:
    return install.scoped(request, ".claude/settings.json", ".claude/settings.json")


def mcp_file(request: IntegrationRequest) -> Path:
    return install.scoped(request, ".claude.json", ".mcp.json")


def skills_dir(request: IntegrationRequest) -> Path:
    return install.scoped(request, ".claude/skills", ".claude/skills")


def _hooks(request: IntegrationRequest) -> IntegrationResult:
    path = settings_file(request)
    return install.command_hook(request, NAME, path, "Claude Code settings file", "PreToolUse")


def _mcp(request: IntegrationRequest) -> IntegrationResult:
    entry = {"type": "stdio", **install.memory_server(request, NAME)}
    path = mcp_file(request)
    result = install.mcp_server(request, path, "Claude Code MCP config", "mcpServers", entry)
    return install.note(request, result, APPROVE_MCP, project_only=True)


def _skills(request: IntegrationRequest) -> IntegrationResult:
    return install.skills(request, NAME, skills_dir(request))


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    return install.dispatch(request, hooks=_hooks, mcp=_mcp, skills=_skills)


@hookimpl
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent:
    return PROTOCOL.parse(event, payload)


@hookimpl
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse:
    return PROTOCOL.respond(decision)
