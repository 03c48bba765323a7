"""Codex CLI integration: ecc's ``PreToolUse`` hook, its MCP server and skills.

Installed into ``$CODEX_HOME/hooks.json`` (``--user``; ``CODEX_HOME`` defaults to ``~/.codex``)
or ``<project>/.codex/hooks.json`` (``--project``; Codex loads it only in a trusted project), in
the same shape as Claude Code's. Codex runs a new or changed hook only once it is trusted
(``/hooks`` in the TUI; ``codex exec --dangerously-bypass-hook-trust`` for one run). A session
``ecc run`` starts needs neither: its command adds and trusts ecc's hook for that process alone
(:mod:`ecc_adapter_codex.sessionhooks`), and an installed hook steps aside there.
Payloads carry ``tool_name`` (shell calls normalised to ``Bash`` with ``tool_input.command``;
``apply_patch`` for edits). Answers: exit 0 allows; exit 2 with the reason on stderr denies.
Codex hooks have no "ask": ``require_confirmation`` is held for a person's decision in an ecc
session, and outside one denied with the reason saying so.

MCP: ``[mcp_servers.ecc-memory]`` (``command``, ``args``, ``env.ECC_MEMORY_HARNESS = "codex"``)
in ``$CODEX_HOME/config.toml`` (user) or ``<project>/.codex/config.toml`` (project; read only in
a trusted project), edited as text so uninstalling gives the file back byte for byte.
Skills: ``$CODEX_HOME/skills/<name>/`` or ``<project>/.codex/skills/<name>/``.

Loaded on its own by ``ecc hook``'s hot path: it imports nothing from its package.
"""

from __future__ import annotations

import os

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

NAME = "codex"
PROTOCOL = HookProtocol(
    NAME,
    phases={"PreToolUse": "pre_tool", "PostToolUse": "post_tool"},
    kinds={
        "bash": "shell",
        "shell": "shell",
        "exec_command": "shell",
        "local_shell": "shell",
        "apply_patch": "edit",
        "view_image": "read",
        "web_search": "fetch",
    },
    mcp_prefix="mcp__",
    text_inputs={"apply_patch": "patch"},
    product="Codex",
)
TRUST_HOOK = (
    "Codex runs a new hook only after you trust it: open /hooks in codex and trust it"
    " (or pass --dangerously-bypass-hook-trust to codex exec)."
)


def codex_home() -> Path:
    from pathlib import Path

    home = os.environ.get("CODEX_HOME")
    return Path(home) if home else Path.home() / ".codex"


def hooks_file(request: IntegrationRequest) -> Path:
    return install.scoped(request, lambda: codex_home() / "hooks.json", ".codex/hooks.json")


def config_file(request: IntegrationRequest) -> Path:
    return install.scoped(request, lambda: codex_home() / "config.toml", ".codex/config.toml")


def skills_dir(request: IntegrationRequest) -> Path:
    return install.scoped(request, lambda: codex_home() / "skills", ".codex/skills")


def _trust_note(request: IntegrationRequest, result: IntegrationResult) -> IntegrationResult:
    advice = (
        f"Codex reads {request.project_dir / '.codex'} only in a trusted project (trust it"
        f' when codex asks, or set [projects."{request.project_dir}"] trust_level = "trusted"'
        " in ~/.codex/config.toml)."
    )
    return install.note(request, result, advice, project_only=True)


def _hooks(request: IntegrationRequest) -> IntegrationResult:
    result = install.command_hook(
        request, NAME, hooks_file(request), "Codex hooks file", "PreToolUse"
    )
    return install.note(request, result, TRUST_HOOK, project_only=False)


def _mcp(request: IntegrationRequest) -> IntegrationResult:
    entry = install.memory_server(request, NAME)
    path = config_file(request)
    return _trust_note(
        request, install.mcp_server(request, path, "Codex config file", "mcp_servers", entry)
    )


def _skills(request: IntegrationRequest) -> IntegrationResult:
    return _trust_note(request, install.skills(request, NAME, skills_dir(request)))


@hookimpl
def ecc_install_integration(harness: str, request: IntegrationRequest) -> IntegrationResult | None:
    return install.dispatch(request, hooks=_hooks, mcp=_mcp, skills=_skills)


@hookimpl
def ecc_parse_hook_payload(harness: str, event: str, payload: Any) -> HookEvent:
    return PROTOCOL.parse(event, payload)


@hookimpl
def ecc_hook_response(harness: str, decision: HookDecision) -> HookResponse:
    return PROTOCOL.respond(decision)
