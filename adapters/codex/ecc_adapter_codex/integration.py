"""Codex CLI integration: ecc's ``PreToolUse`` hook, its MCP server and skills.

Installed into ``$CODEX_HOME/hooks.json`` (``--user``; ``CODEX_HOME`` defaults to ``~/.codex``)
or ``<project>/.codex/hooks.json`` (``--project``; Codex loads it only in a trusted project), in
the same shape as Claude Code's. Codex runs a new or changed hook only once it is trusted
(``/hooks`` in the TUI; ``codex exec --dangerously-bypass-hook-trust`` for one run).
Payloads carry ``tool_name`` (shell calls normalised to ``Bash`` with ``tool_input.command``;
``apply_patch`` for edits). Answers: exit 0 allows; exit 2 with the reason on stderr denies.
Codex hooks have no "ask": ``require_confirmation`` is denied, with the reason saying so.

MCP: ``[mcp_servers.ecc-memory]`` (``command``, ``args``, ``env.ECC_MEMORY_HARNESS = "codex"``)
in ``$CODEX_HOME/config.toml`` (user) or ``<project>/.codex/config.toml`` (project; read only in
a trusted project), edited with tomlkit so comments and every other key stay.
Skills: ``$CODEX_HOME/skills/<name>/`` or ``<project>/.codex/skills/<name>/``.

Loaded on its own by ``ecc hook``'s hot path: it imports nothing from its package.
"""

from __future__ import annotations

import json
import os
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

NAME = "codex"
PHASES = {"PreToolUse": "pre_tool", "PostToolUse": "post_tool"}
KINDS = {
    "bash": "shell",
    "shell": "shell",
    "exec_command": "shell",
    "local_shell": "shell",
    "apply_patch": "edit",
    "view_image": "read",
    "web_search": "fetch",
}


def hooks_file(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        home = os.environ.get("CODEX_HOME")
        return (Path(home) if home else Path.home() / ".codex") / "hooks.json"
    return request.project_dir / ".codex" / "hooks.json"


def codex_home() -> Path:
    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def config_file(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return codex_home() / "config.toml"
    return request.project_dir / ".codex" / "config.toml"


def skills_dir(request: IntegrationRequest) -> Path:
    if request.scope == "user":
        return codex_home() / "skills"
    return request.project_dir / ".codex" / "skills"


def _trust_note(request: IntegrationRequest, result: IntegrationResult) -> IntegrationResult:
    if request.scope == "project" and request.action == "install" and result.changed_files:
        result.message += (
            f"\nCodex reads {request.project_dir / '.codex'} only in a trusted project (trust it"
            f' when codex asks, or set [projects."{request.project_dir}"] trust_level = "trusted"'
            " in ~/.codex/config.toml)."
        )
    return result


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    if harness != NAME:
        return None
    if request.kind == "mcp":
        from ecc.portability.harnessfiles import edit_mcp_toml, mcp_argv

        argv = mcp_argv(request.options)
        entry = {"command": argv[0], "args": argv[1:], "env": {"ECC_MEMORY_HARNESS": NAME}}
        return _trust_note(
            request,
            edit_mcp_toml(
                config_file(request),
                "Codex config file",
                "mcp_servers",
                entry,
                request.action,
                request.dry_run,
            ),
        )
    if request.kind == "skills":
        from ecc.portability.skills import sync_skills

        return _trust_note(request, sync_skills(NAME, skills_dir(request), request))
    if request.kind != "hooks":
        return None
    from ecc.portability.harnessfiles import edit_hooks_file, hook_command

    entry = {
        "matcher": "*",
        "hooks": [
            {"type": "command", "command": hook_command(request.options, NAME), "timeout": 30}
        ],
    }
    result = edit_hooks_file(
        hooks_file(request),
        "Codex hooks file",
        NAME,
        {"PreToolUse": entry},
        request.action,
        request.dry_run,
    )
    if request.action == "install" and result.changed_files:
        result.message += (
            "\nCodex runs a new hook only after you trust it: open /hooks in codex and trust it"
            " (or pass --dangerously-bypass-hook-trust to codex exec)."
        )
    return result


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
        if isinstance(tool_input, str) and tool.lower() == "apply_patch":
            tool_input = {"patch": tool_input}
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
    if decision.decision == "ask":  # Codex hooks cannot ask: deny, and say why
        decision.decision = "deny"
        decision.reason += " (Codex hooks cannot ask for confirmation, so ecc denies it)"
    return HookResponse(exit_code=2, stderr=decision.reason + "\n")
