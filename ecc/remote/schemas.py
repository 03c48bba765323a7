"""Request and response bodies of the remote API (version 1).

These pydantic models are the validation *and* the OpenAPI description served at
``/openapi.json``: a field documented here is exactly what the server checks. Request models are
strict (no coercion of ``"true"`` into ``true``) and forbid unknown fields.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
SESSION_ID_PATTERN = r"^[0-9a-f]{4,12}$"
MAX_TASK_CHARS = 100_000
MAX_PATH_CHARS = 4096

SessionState = Literal["queued", "pending", "running", "stale", "completed", "failed", "stopped"]
# What views show: the state, or "waiting" for a running session whose tool call is held.
DisplayState = Literal[
    "queued", "pending", "running", "waiting", "stale", "completed", "failed", "stopped"
]
Stream = Literal["stdout", "stderr"]


def _printable(value: str, what: str, allow_newlines: bool) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{what} must be valid UTF-8 text") from None
    bad = {"\x00"} if allow_newlines else {chr(c) for c in range(32)} | {"\x7f"}
    if any(ch in bad for ch in value):
        raise ValueError(f"{what} must not contain control characters")
    return value


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class SessionCreate(_Request):
    """Start a session on ``task`` in ``repository`` (a directory under an allowed root)."""

    task: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_TASK_CHARS,
            pattern=r"\S",
            description="What the agent should do (for the shell harness: a command line).",
        ),
    ]
    repository: Annotated[
        str,
        Field(
            min_length=1,
            max_length=MAX_PATH_CHARS,
            pattern=r"^/",
            description="Absolute path, on the server, of the project directory.",
        ),
    ]
    harness: Annotated[str | None, Field(pattern=NAME_PATTERN)] = Field(
        default=None, description="Harness name (default: profile, config, or detected)."
    )
    profile: Annotated[str | None, Field(pattern=NAME_PATTERN)] = Field(
        default=None, description="Agent profile from [agent_profiles]."
    )
    worktree: bool | None = Field(
        default=None, description="Run in a fresh git worktree (default: auto_create_worktrees)."
    )
    name: Annotated[str, Field(max_length=200)] = Field(default="", description="A label.")

    @field_validator("task")
    @classmethod
    def _task(cls, value: str) -> str:
        return _printable(value, "task", allow_newlines=True)

    @field_validator("repository")
    @classmethod
    def _repository(cls, value: str) -> str:
        _printable(value, "repository", allow_newlines=False)
        if not os.path.isabs(value):
            raise ValueError("repository must be an absolute path")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        return _printable(value, "name", allow_newlines=False)


class StopRequest(_Request):
    grace: float | None = Field(
        default=None,
        ge=0,
        le=600,
        description="Seconds between SIGTERM and SIGKILL (default: stop_grace_secs).",
    )


class SessionOut(BaseModel):
    id: str
    name: str
    task: str
    harness: str
    profile_name: str | None
    state: SessionState
    display_state: DisplayState = Field(
        description="state, or waiting: a tool call waits for a decision (GET /v1/approvals)."
    )
    pending_approval: str | None = Field(description="The id of that approval, if any.")
    open_conflict: int | None = Field(
        default=None, description="The session's oldest open conflict incident (ecc conflicts)."
    )
    reason: str
    repository: str
    working_dir: str
    use_worktree: bool
    worktree_path: str | None
    worktree_branch: str | None
    base_branch: str | None
    pr_url: str | None = Field(description="The pull request `ecc pr` opened, if any.")
    parent_id: str | None = Field(
        default=None, description="The session that started this one (delegation), if any."
    )
    enforced: bool | None = Field(
        description="The harness ran under ecc's own hook with risk.enforce on (null: not yet)."
    )
    exit_code: int | None
    exit_signal: int | None
    input_tokens: int
    output_tokens: int
    cost_usd: float
    created_at: str
    updated_at: str
    started_at: str | None
    ended_at: str | None

    @classmethod
    def of(cls, session: Any) -> SessionOut:
        return cls(
            id=session.id,
            name=session.name,
            task=session.task,
            harness=session.harness,
            profile_name=session.profile_name,
            state=session.state.value,
            display_state=session.display_state,
            pending_approval=session.pending_approval,
            open_conflict=session.open_conflict,
            reason=session.reason,
            repository=session.project_dir,
            working_dir=session.working_dir,
            use_worktree=session.use_worktree,
            worktree_path=session.worktree_path,
            worktree_branch=session.worktree_branch,
            base_branch=session.base_branch,
            pr_url=session.pr_url,
            parent_id=session.parent_id,
            enforced=session.enforced,
            exit_code=session.exit_code,
            exit_signal=session.exit_signal,
            input_tokens=session.input_tokens,
            output_tokens=session.output_tokens,
            cost_usd=session.cost_usd,
            created_at=session.created_at,
            updated_at=session.updated_at,
            started_at=session.started_at,
            ended_at=session.ended_at,
        )


class SessionDetail(SessionOut):
    output_lines: int


class SessionList(BaseModel):
    sessions: list[SessionOut]


class OutputLine(BaseModel):
    seq: int
    stream: Stream
    ts: str
    line: str


class OutputPage(BaseModel):
    session_id: str
    state: SessionState
    finished: bool = Field(description="The session is over and every line is in the store.")
    lines: list[OutputLine]
    next_after: int = Field(description="Pass as ?after= to get the lines that follow.")
    truncated: bool = Field(
        description="The page ended early at remote.max_response_bytes; more lines follow."
    )


class Health(BaseModel):
    ok: bool


class ErrorDetail(BaseModel):
    loc: list[str]
    msg: str
    type: str


class ErrorOut(BaseModel):
    error: str = Field(description="A stable machine-readable code, e.g. unauthorized.")
    message: str = Field(description="One line for people.")
    details: list[ErrorDetail] | None = None
