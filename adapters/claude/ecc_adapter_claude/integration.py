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

import json
from pathlib import Path
from typing import Any

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import (
    HookDecision,
    HookEvent,
    HookResponse,
    IntegrationRequest,
    IntegrationResult,
    ToolCall,
)

__all__ = ["ecc_hook_response", "ecc_install_integration", "ecc_parse_hook_payload"]

NAME = "claude"
PHASES = {"PreToolUse": "pre_tool", "PostToolUse": "post_tool"}
KINDS = {
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
}


def settings_file(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return Path.home() / ".claude" / "settings.json"
    return request.project_dir / ".claude" / "settings.json"


def mcp_file(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return Path.home() / ".claude.json"
    return request.project_dir / ".mcp.json"


def skills_dir(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return Path.home() / ".claude" / "skills"
    return request.project_dir / ".claude" / "skills"


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    if harness != NAME:
        return None
    if request.kind == "mcp":
        from ecc.portability.harnessfiles import edit_mcp_json, mcp_argv

        argv = mcp_argv(request.options)
        entry = {
            "type": "stdio",
            "command": argv[0],
            "args": argv[1:],
            "env": {"ECC_MEMORY_HARNESS": NAME},
        }
        result = edit_mcp_json(
            mcp_file(request),
            "Claude Code MCP config",
            "mcpServers",
            entry,
            request.action,
            request.dry_run,
        )
        if request.scope == "project" and request.action == "install" and result.changed_files:
            result.message += (
                "\nClaude Code asks you to approve a project's .mcp.json servers when it starts"
                ' (or list "ecc-memory" in enabledMcpjsonServers of .claude/settings.local.json).'
            )
        return result
    if request.kind == "skills":
        from ecc.portability.skills import sync_skills

        return sync_skills(NAME, skills_dir(request), request)
    if request.kind != "hooks":
        return None
    from ecc.portability.harnessfiles import edit_hooks_file, hook_command

    entry = {
        "matcher": "*",
        "hooks": [
            {"type": "command", "command": hook_command(request.options, NAME), "timeout": 30}
        ],
    }
    return edit_hooks_file(
        settings_file(request),
        "Claude Code settings file",
        NAME,
        {"PreToolUse": entry},
        request.action,
        request.dry_run,
    )


@hookimpl
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent | None:
    if harness != NAME:
        return None
    data = payload if isinstance(payload, dict) else {}
    name = str(data.get("hook_event_name") or event)
    result = HookEvent(
        harness=NAME,
        event=name,
        phase=PHASES.get(name, "other"),
        harness_session_id=data.get("session_id"),
        tool_use_id=data.get("tool_use_id"),
    )
    tool = data.get("tool_name")
    if result.phase != "other" and isinstance(tool, str) and tool:
        tool_input = data.get("tool_input")
        result.call = ToolCall(
            tool=tool,
            input=tool_input if isinstance(tool_input, dict | str) else {},
            harness=NAME,
            cwd=data.get("cwd"),
            kind=KINDS.get(tool.lower(), "mcp" if tool.startswith("mcp__") else "other"),
        )
        response = data.get("tool_response")
        if response is not None:
            result.output = response if isinstance(response, str) else json.dumps(response)
    else:
        result.phase = "other"
    return result


@hookimpl
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse | None:
    if harness != NAME:
        return None
    if decision.event.phase != "pre_tool" or decision.decision == "allow":
        return HookResponse()
    if decision.decision == "ask":
        answer = {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": decision.reason,
            }
        }
        return HookResponse(stdout=json.dumps(answer) + "\n")
    return HookResponse(exit_code=2, stderr=decision.reason + "\n")
