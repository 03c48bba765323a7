"""Plain data passed between the core and plugins through the hooks of ``ecc.contract.hookspecs``.

Dataclasses rather than pydantic models: they are built on hot paths (every output line, every
tool call) and must import in microseconds. Processing a dataclass still costs about half a
millisecond, and ``ecc hook`` runs before every tool call: so only the types a tool call's hook
uses are defined here on import, as dataclasses written by :func:`ecc.contract.plain.plain`
(importing :mod:`dataclasses` itself would cost that hook about 10 ms); the others live in
:mod:`ecc.contract.moretypes` and are reached under their names here on first use
(``from ecc.contract.types import SyncRule``).
"""

from __future__ import annotations

from ecc.contract.plain import factory, plain

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (ecc hook imports this)
if TYPE_CHECKING:  # for type checkers only: defining a Protocol costs every hot path a little
    from pathlib import Path
    from typing import Any, Protocol

    class ConfigLike(Protocol):
        """The validated configuration as plugins receive it: a read-only view whose tables
        read as attributes or keys (``config.risk.block``, ``config["risk"]["block"]``), the
        same in every process (``ecc.runtime.config.view.ConfigView``)."""

        def __getattr__(self, name: str) -> Any: ...

        def __getitem__(self, key: str) -> Any: ...

    Config = ConfigLike  # the name the hook specs use

    from ecc.contract.moretypes import (
        HarnessInfo,
        LaunchContext,
        MemoryCandidate,
        Notification,
        OutputEvent,
        ProfileTranslation,
        PullRequest,
        PullRequestProposal,
        SessionEnforcement,
        SessionMcpServer,
        SessionRecord,
        SurfaceFile,
        SurfacePlan,
        SyncCommand,
        SyncHook,
        SyncRule,
        SyncSource,
    )


@plain()
class ToolCall:
    """A tool call made by an agent, normalised across harnesses."""

    tool: str
    input: dict[str, Any] | str
    harness: str = ""
    session_id: str | None = None
    cwd: str | None = None
    # Canonical kind set by the adapter (shell, write, edit, read, search, fetch, other) so that
    # scorers need not know every harness's tool names; "" when unknown.
    kind: str = ""

    @property
    def input_text(self) -> str:
        if isinstance(self.input, str):
            return self.input
        import json

        return json.dumps(self.input, sort_keys=True, ensure_ascii=False)


@plain(frozen=True)
class RiskContribution:
    amount: float
    reason: str
    scorer: str = ""


@plain()
class IntegrationRequest:
    kind: str  # hooks | mcp | skills
    action: str  # install | uninstall
    scope: str  # project | user
    project_dir: Path
    dry_run: bool = False
    options: dict[str, Any] = factory(dict)


@plain()
class IntegrationResult:
    changed_files: list[Path] = factory(list)
    diff: str = ""
    message: str = ""
    # where the integration lives (the config file edited, the skills directory), when known
    location: Path | None = None


@plain()
class HookEvent:
    """One invocation of a harness hook (``ecc hook``), normalised by the harness's adapter.

    ``phase`` is ``pre_tool`` (the tool has not run: ecc may deny it), ``post_tool`` (it ran) or
    ``other`` (session start/stop, prompts: recorded as nothing, always allowed).
    """

    harness: str
    event: str  # the harness's own event name (PreToolUse, BeforeTool, tool.execute.before...)
    phase: str = "other"
    call: ToolCall | None = None
    harness_session_id: str | None = None
    tool_use_id: str | None = None
    output: str | None = None  # post_tool: what the tool returned, as text


@plain()
class HookDecision:
    """What ecc decided about one hook event; adapters turn it into the harness's protocol.

    ``decision`` is ``allow``, ``ask`` or ``deny``; ``action`` is the risk action
    (``allow``, ``review``, ``require_confirmation``, ``block``) it came from. An adapter whose
    harness cannot ask sets ``decision`` to ``deny`` when answering: the call is recorded after
    the answer, with the decision the harness was really given.
    """

    event: HookEvent
    decision: str = "allow"
    action: str = "allow"
    score: float = 0.0
    reason: str = ""
    reasons: list[str] = factory(list)  # every scorer contribution's reason


@plain()
class HookResponse:
    """The answer to a harness hook: what ``ecc hook`` prints and its exit status."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""


# -- one source, every harness (``ecc sync``) ----------------------------------------------------

# What ``ecc sync`` renders through ``ecc_sync_surface`` (skills and MCP go through
# ``ecc_install_integration``), and how a harness carries one (the compliance matrix's words).
SYNC_SURFACES = ("rules", "commands", "hooks")
SURFACE_MODES = ("native", "translated", "instruction-only", "unsupported")
# Harness-neutral hook events of a project's own hooks (``[[sync.hooks]] event``).
HOOK_EVENTS = ("pre_tool", "post_tool", "session_start", "session_end", "prompt_submit")


DEFERRED = frozenset(
    {
        "HarnessInfo",
        "SessionEnforcement",
        "SessionMcpServer",
        "LaunchContext",
        "ProfileTranslation",
        "OutputEvent",
        "Notification",
        "PullRequestProposal",
        "PullRequest",
        "SyncRule",
        "SyncCommand",
        "SyncHook",
        "SyncSource",
        "SurfaceFile",
        "SurfacePlan",
        "SessionRecord",
        "MemoryCandidate",
    }
)


__all__ = [  # the public names, defined here or in ecc.contract.moretypes
    "HOOK_EVENTS",
    "SURFACE_MODES",
    "SYNC_SURFACES",
    "HarnessInfo",
    "HookDecision",
    "HookEvent",
    "HookResponse",
    "IntegrationRequest",
    "IntegrationResult",
    "LaunchContext",
    "MemoryCandidate",
    "Notification",
    "OutputEvent",
    "ProfileTranslation",
    "PullRequest",
    "PullRequestProposal",
    "RiskContribution",
    "SessionEnforcement",
    "SessionMcpServer",
    "SessionRecord",
    "SurfaceFile",
    "SurfacePlan",
    "SyncCommand",
    "SyncHook",
    "SyncRule",
    "SyncSource",
    "ToolCall",
]


def __getattr__(name: str) -> Any:
    """The types of :mod:`ecc.contract.moretypes`, imported on first use."""
    if name in DEFERRED:
        from ecc.contract import moretypes

        value = getattr(moretypes, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *DEFERRED})
