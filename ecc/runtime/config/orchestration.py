"""``[orchestration_templates.NAME]``: named groups of sessions ``ecc run --template`` starts.

A template is a ``set`` (every step starts at once, as one group) or a ``sequence`` (each step
starts when the one before it completed, and its check passed). A step's task may hold
``{{ name }}`` placeholders filled from ``ecc run --var name=value``; the resolution lives in
:mod:`ecc.sessions.templates`. The whole table is a guarded key: a step's task reaches a
harness (``shell`` runs it) and ``check`` is a program, so a repository's own file needs
``ecc trust`` for it (:mod:`ecc.runtime.config.guarded`).
"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field, field_validator

from ecc.runtime.config.sections import _Strict


class TemplateStep(_Strict):
    """One step: its task, and the harness, profile and worktree choice it overrides."""

    name: str | None = None
    task: str
    harness: str | None = Field(default=None, validation_alias=AliasChoices("harness", "agent"))
    profile: str | None = None
    worktree: bool | None = None

    @field_validator("task")
    @classmethod
    def _task(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("a step's task must not be empty")
        return value


class OrchestrationTemplate(_Strict):
    """A named group: ``mode``, step defaults, an optional check, and the steps."""

    description: str = ""
    mode: Literal["set", "sequence"] = "set"
    harness: str | None = Field(default=None, validation_alias=AliasChoices("harness", "agent"))
    profile: str | None = None
    worktree: bool | None = None
    check: str = ""  # a shell command run in each step's worktree when the step ends
    check_timeout_secs: float = Field(default=600.0, gt=0)
    steps: list[TemplateStep] = Field(min_length=1)
