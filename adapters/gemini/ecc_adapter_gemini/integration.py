"""Gemini CLI integration: ecc's ``BeforeTool`` hook, its MCP server and skills.

Installed into ``<project>/.gemini/settings.json`` (``--project``) or ``~/.gemini/settings.json``
(``--user``) as ``{"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command",
"command": "… ecc hook --harness gemini", "timeout": 30000}]}]}}`` (timeouts in ms). Payloads
carry ``hook_event_name``, ``tool_name`` (``run_shell_command``, ``write_file``, ``replace``…),
``tool_input``, ``session_id``, ``cwd``. Answers: exit 0 allows; exit 2 with the reason on stderr
denies. ``require_confirmation`` is denied too (headless Gemini has nobody to ask).

MCP: ``ecc-memory`` in ``mcpServers`` of the same settings file (``command``, ``args``,
``env.ECC_MEMORY_HARNESS = "gemini"``). Skills: ``<project>/.gemini/skills/<name>/`` (loaded in
a trusted folder) or ``~/.gemini/skills/<name>/``.

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

NAME = "gemini"
PHASES = {"BeforeTool": "pre_tool", "AfterTool": "post_tool"}
KINDS = {
    "run_shell_command": "shell",
    "write_file": "write",
    "replace": "edit",
    "edit": "edit",
    "read_file": "read",
    "read_many_files": "read",
    "list_directory": "search",
    "glob": "search",
    "grep_search": "search",
    "search_file_content": "search",
    "web_fetch": "fetch",
    "google_web_search": "fetch",
}


def settings_file(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return Path.home() / ".gemini" / "settings.json"
    return request.project_dir / ".gemini" / "settings.json"


def skills_dir(request: IntegrationRequest) -> Path:
    return settings_file(request).parent / "skills"


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    if harness != NAME:
        return None
    if request.kind == "mcp":
        from ecc.portability.harnessfiles import edit_mcp_json, mcp_argv

        argv = mcp_argv(request.options)
        entry = {"command": argv[0], "args": argv[1:], "env": {"ECC_MEMORY_HARNESS": NAME}}
        result = edit_mcp_json(
            settings_file(request),
            "Gemini CLI settings file",
            "mcpServers",
            entry,
            request.action,
            request.dry_run,
        )
        result.message += (
            "\nGemini CLI starts MCP servers only in a trusted folder (it asks on first start)."
            if request.action == "install" and result.changed_files
            else ""
        )
        return result
    if request.kind == "skills":
        from ecc.portability.skills import sync_skills

        result = sync_skills(NAME, skills_dir(request), request)
        if request.scope == "project" and request.action == "install" and result.changed_files:
            result.message += "\nGemini CLI loads a project's skills only in a trusted folder."
        return result
    if request.kind != "hooks":
        return None
    from ecc.portability.harnessfiles import edit_hooks_file, hook_command

    entry = {
        "matcher": ".*",
        "hooks": [
            {"type": "command", "command": hook_command(request.options, NAME), "timeout": 30000}
        ],
    }
    return edit_hooks_file(
        settings_file(request),
        "Gemini CLI settings file",
        NAME,
        {"BeforeTool": entry},
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
    )
    tool = data.get("tool_name")
    if result.phase != "other" and isinstance(tool, str) and tool:
        tool_input = data.get("tool_input")
        result.call = ToolCall(
            tool=tool,
            input=tool_input if isinstance(tool_input, dict | str) else {},
            harness=NAME,
            cwd=data.get("cwd"),
            kind=KINDS.get(tool.lower(), "other"),
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
    if decision.decision == "ask":  # nobody to ask: deny, and say why
        decision.decision = "deny"
        decision.reason += " (Gemini CLI hooks cannot ask for confirmation, so ecc denies it)"
    return HookResponse(exit_code=2, stderr=decision.reason + "\n")
