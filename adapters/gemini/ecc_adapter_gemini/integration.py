"""Gemini CLI integration: ecc's ``BeforeTool`` hook, its MCP server and skills.

Installed into ``<project>/.gemini/settings.json`` (``--project``) or ``~/.gemini/settings.json``
(``--user``) as ``{"hooks": {"BeforeTool": [{"matcher": ".*", "hooks": [{"type": "command",
"command": "… ecc hook --harness gemini", "timeout": 630000}]}]}}`` (in ms: longer than
``risk.approval_timeout``). Payloads carry ``hook_event_name``, ``tool_name``
(``run_shell_command``, ``write_file``, ``replace``…), ``tool_input``, ``session_id``, ``cwd``.
Answers: exit 0 allows; exit 2 with the reason on stderr denies. ``require_confirmation`` is
held for a person's decision in an ecc session, denied outside one (Gemini cannot ask).

MCP: ``ecc-memory`` in ``mcpServers`` of the same settings file (``command``, ``args``,
``env.ECC_MEMORY_HARNESS = "gemini"``); its ``//`` and ``/* */`` comments are kept.
Skills: ``<project>/.gemini/skills/<name>/`` (loaded in a trusted folder) or
``~/.gemini/skills/<name>/``.

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

NAME = "gemini"
PROTOCOL = HookProtocol(
    NAME,
    phases={"BeforeTool": "pre_tool", "AfterTool": "post_tool"},
    kinds={
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
    },
    tool_use_id_field=None,
    product="Gemini CLI",
)
SETTINGS = "Gemini CLI settings file"


def settings_file(request: IntegrationRequest) -> Path:
    return install.scoped(request, ".gemini/settings.json", ".gemini/settings.json")


def skills_dir(request: IntegrationRequest) -> Path:
    return settings_file(request).parent / "skills"


def _hooks(request: IntegrationRequest) -> IntegrationResult:
    path = settings_file(request)
    return install.command_hook(
        request, NAME, path, SETTINGS, "BeforeTool", matcher=".*", milliseconds=True
    )


def _mcp(request: IntegrationRequest) -> IntegrationResult:
    entry = install.memory_server(request, NAME)
    result = install.mcp_server(request, settings_file(request), SETTINGS, "mcpServers", entry)
    advice = "Gemini CLI starts MCP servers only in a trusted folder (it asks on first start)."
    return install.note(request, result, advice, project_only=False)


def _skills(request: IntegrationRequest) -> IntegrationResult:
    result = install.skills(request, NAME, skills_dir(request))
    advice = "Gemini CLI loads a project's skills only in a trusted folder."
    return install.note(request, result, advice, project_only=True)


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    return install.dispatch(request, hooks=_hooks, mcp=_mcp, skills=_skills)


@hookimpl
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent:
    return PROTOCOL.parse(event, payload)


@hookimpl
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse:
    return PROTOCOL.respond(decision)
