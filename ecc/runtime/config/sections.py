"""The tables of the configuration, one pydantic model each (``[risk]``, ``[worktree]``, ...).

:class:`ecc.runtime.config.model.Config` is made of these; they live apart so the model module
keeps to the whole and its loading. ``AgentProfile`` is also what adapters receive.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class HarnessRunner(_Strict):
    """``[harness_runners.NAME]``: how to run any agent CLI from config alone."""

    program: str = ""
    base_args: list[str] = Field(default_factory=list)
    project_markers: list[str] = Field(default_factory=list)
    cwd_flag: str | None = None
    session_name_flag: str | None = None
    task_flag: str | None = None
    model_flag: str | None = None
    add_dir_flag: str | None = None
    include_directories_flag: str | None = None
    allowed_tools_flag: str | None = None
    disallowed_tools_flag: str | None = None
    permission_mode_flag: str | None = None
    max_budget_usd_flag: str | None = None
    append_system_prompt_flag: str | None = None
    resume_flag: str | None = None
    inline_system_prompt_for_task: bool = True
    env: dict[str, str] = Field(default_factory=dict)


class AgentProfile(_Strict):
    """``[agent_profiles.NAME]``: launch settings a session can be started with."""

    inherits: str | None = None
    harness: str | None = None
    model: str | None = None
    allowed_tools: list[str] = Field(default_factory=list)
    disallowed_tools: list[str] = Field(default_factory=list)
    permission_mode: str | None = None
    add_dirs: list[str] = Field(default_factory=list)
    max_budget_usd: float | None = Field(default=None, ge=0)
    token_budget: int | None = Field(default=None, ge=0)
    append_system_prompt: str | None = None


class BudgetThresholds(_Strict):
    advisory: float = 0.50
    warning: float = 0.75
    critical: float = 0.90

    @model_validator(mode="after")
    def _ordered(self) -> BudgetThresholds:
        if not (0 < self.advisory < self.warning < self.critical < 1.0):
            raise ValueError("thresholds must satisfy 0 < advisory < warning < critical < 1")
        return self


class RiskSettings(_Strict):
    """Thresholds on the 0..1 risk score and whether ecc acts on them through harness hooks."""

    enforce: bool = False
    # What ``ecc hook`` answers when it fails internally: allow and log (False) or deny (True).
    fail_closed: bool = False
    # A hook payload larger than this gets the fail decision above at once, without scoring, so
    # the harness's hook timeout never decides (scoring is linear: about 1 s per MiB at most).
    max_input_bytes: int = Field(default=1024 * 1024, gt=0)
    # How long ``ecc hook`` holds a require_confirmation call of a session for a person's
    # decision (``ecc approve``/``ecc deny``), and what it answers when none comes in time.
    approval_timeout: float = Field(default=600, gt=0, le=86400)
    approval_timeout_decision: Literal["deny", "allow"] = "deny"
    review: float = Field(default=0.35, ge=0, le=1)
    require_confirmation: float = Field(default=0.60, ge=0, le=1)
    block: float = Field(default=0.85, ge=0, le=1)
    disabled_scorers: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _ordered(self) -> RiskSettings:
        if not (self.review <= self.require_confirmation <= self.block):
            raise ValueError("thresholds must satisfy review <= require_confirmation <= block")
        return self


class NotificationSettings(_Strict):
    """Which notifier plugins receive events, and each one's own settings table."""

    notifiers: list[str] = Field(default_factory=lambda: ["log"])
    events: list[str] = Field(
        default_factory=lambda: [
            "session_started",
            "session_completed",
            "session_failed",
            "budget_alert",
            "approval_request",
            "session_conflict",
        ]
    )
    # "HH[:MM]-HH[:MM]" local time, may wrap midnight ("22:00-07:30"); every notifier but ``log``
    # (and one whose settings say ``ignore_quiet_hours = true``) stays silent inside it.
    quiet_hours: str | None = None
    settings: dict[str, dict[str, Any]] = Field(default_factory=dict)

    @field_validator("quiet_hours")
    @classmethod
    def _quiet_hours(cls, value: str | None) -> str | None:
        if value:
            from ecc.runtime.config.quiet_hours import parse_quiet_hours

            parse_quiet_hours(value)  # raises ValueError with the reason
        return value or None


class MemorySettings(_Strict):
    backend: str = "files"
    settings: dict[str, Any] = Field(default_factory=dict)
    # a memory ranker plugin (``ecc.memory_rankers``) re-ordering every search; "" is the exact
    # search alone (``ecc memory search --semantic`` asks for ``semantic`` once)
    ranker: str = ""
    ranker_settings: dict[str, Any] = Field(default_factory=dict)


class StoreSettings(_Strict):
    """Where session state lives: empty ``url`` means SQLite ``ecc.db`` in the state dir."""

    url: str | None = None


class RemoteSettings(_Strict):
    """``ecc remote serve``: what remote callers may target, and the limits they get."""

    allowed_roots: list[str] = Field(default_factory=list)  # empty: no repository is allowed
    allowed_harnesses: list[str] = Field(default_factory=list)  # empty: every installed one
    allowed_profiles: list[str] = Field(default_factory=list)  # empty: every configured one
    max_body_bytes: int = Field(default=256 * 1024, gt=0)
    rate_limit_per_minute: int = Field(default=120, gt=0)
    read_timeout_secs: float = Field(default=10.0, gt=0)  # for a request's headers and its body
    max_response_bytes: int = Field(default=4 * 1024 * 1024, ge=1024)  # an output page's body
    max_idle_connections_per_peer: int = Field(default=8, ge=1)  # the oldest beyond this close


class WorktreeSettings(_Strict):
    """``[worktree]``: what a new session worktree gets, and whether a completed session's
    changes are committed in it (``worktree_root`` and the other ``worktree_*`` keys predate
    this table and stay where they are)."""

    auto_commit: bool = False  # commit the agent's changes when its session completes
    # Files git ignores (``.env``, ``config/*.local``) copied from the checkout into each new
    # worktree: globs relative to the repository root (``**`` crosses directories).
    copy_ignored: list[str] = Field(default_factory=list)
    setup: str = ""  # a shell command run in each new worktree before the agent starts
    setup_timeout_secs: float = Field(default=600.0, gt=0)

    @field_validator("copy_ignored")
    @classmethod
    def _relative_globs(cls, value: list[str]) -> list[str]:
        for pattern in value:
            parts = pattern.replace("\\", "/").split("/")
            if not pattern.strip():
                raise ValueError("a glob must not be empty")
            if pattern.startswith(("/", "~", ":")) or ".." in parts or "\0" in pattern:
                raise ValueError(f"{pattern!r} must be a glob relative to the repository root")
        return value


def _project_relative(value: str, what: str) -> str:
    parts = value.replace("\\", "/").split("/")
    if not value.strip() or value.startswith(("/", "~")) or ".." in parts or "\0" in value:
        raise ValueError(f"{what} {value!r} must be a path inside the project")
    return value


class SyncHookSettings(_Strict):
    """One of the project's own hooks, ``[[sync.hooks]]``: ``ecc sync`` writes it into each
    harness's hook configuration (it runs a program: a project file needs ``ecc trust``)."""

    event: str  # one of ecc.contract.types.HOOK_EVENTS
    command: str = Field(min_length=1)
    matcher: str = ""  # a regular expression on the tool name; "" is every tool
    timeout_secs: int = Field(default=60, gt=0, le=3600)

    @field_validator("event")
    @classmethod
    def _event(cls, value: str) -> str:
        from ecc.contract.types import HOOK_EVENTS

        if value not in HOOK_EVENTS:
            raise ValueError(f"unknown hook event {value!r} (known: {', '.join(HOOK_EVENTS)})")
        return value

    @field_validator("matcher")
    @classmethod
    def _regex(cls, value: str) -> str:
        import re

        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        return value


class SyncSettings(_Strict):
    """``[sync]``: the shared sources ``ecc sync`` installs into each harness named here."""

    harnesses: list[str] = Field(default_factory=list)
    instructions: str = "AGENTS.md"  # the shared instructions file
    rules: str = "rules"  # a folder of NAME.md rules
    commands: str = "commands"  # a folder of NAME.md reusable prompts
    skills: str | None = None  # a folder of skills (as `ecc skills install --source`)
    mcp: bool = False  # register ecc's memory MCP server in each harness
    hooks: list[SyncHookSettings] = Field(default_factory=list)

    @field_validator("instructions", "rules", "commands", "skills")
    @classmethod
    def _inside(cls, value: str | None) -> str | None:
        return None if value is None else _project_relative(value, "a sync source")


class WebSettings(_Strict):
    """``[web]``: where people reach ``ecc web``, so notifications can link to a session."""

    base_url: str | None = None  # e.g. https://ecc.example.org:8787 (the pages are under /web/)

    @field_validator("base_url")
    @classmethod
    def _http(cls, value: str | None) -> str | None:
        from urllib.parse import urlsplit

        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in ("http", "https") or not parts.hostname or " " in value:
            raise ValueError(f"{value!r} is not an http(s) URL")
        return value.rstrip("/")


class ConflictResolution(_Strict):
    """``[conflict_resolution]``: what the daemon does when two active sessions change the same
    file (``ecc conflicts``). ``escalate`` pauses the later writer until the earlier one is
    merged or removed; ``last_write_wins`` pauses the earlier one instead; ``merge`` pauses the
    later writer for a merge review (resumed the same way)."""

    enabled: bool = True
    strategy: Literal["escalate", "last_write_wins", "merge"] = "escalate"
    notify_lead: bool = True  # a session_conflict notification through the notifiers


class DelegationSettings(_Strict):
    """``[delegation]``: sessions an agent starts through ecc's sessions MCP server.

    ``enabled`` registers the server in each managed session's harness (adapters with the
    ``session_mcp`` capability). A child is refused past ``max_depth`` levels below a session
    started by a person, or past ``max_children`` children of one parent. A repository's own
    config may lower these; raising them (or enabling) needs trust (``guarded.py``).
    """

    enabled: bool = True
    max_depth: int = Field(default=2, ge=0)
    max_children: int = Field(default=4, ge=0)
    max_wait_secs: float = Field(default=300.0, gt=0)  # the longest one session_wait call waits
