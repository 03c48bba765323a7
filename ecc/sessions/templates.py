"""Resolving an ``[orchestration_templates.NAME]`` into the members of a group.

Placeholders are ``{{ name }}`` (letters, digits, ``_`` and ``-``; spaces allowed inside the
braces), as the reference writes them: single braces would collide with what tasks hold
(``${HOME}``, ``awk '{print $1}'``, JSON). Values come from ``ecc run --var name=value`` and two
built-ins: ``cwd`` (the directory the group starts in) and ``task`` (``ecc run``'s TASK, when
given). A value is inserted as it is, never expanded again. Everything is checked before
anything starts: an unknown template names the known ones; missing variables are named
together in one line; a ``--var`` no step uses is refused too (a misspelt name would otherwise
pass silently); so is an unknown harness or profile.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_-]+)\s*\}\}")
VAR_NAME = re.compile(r"[A-Za-z0-9_-]+")


@dataclass(frozen=True)
class Member:
    """One session a group starts: what ``ecc run`` would be given for it."""

    task: str
    harness: str | None = None
    profile: str | None = None
    use_worktree: bool | None = None
    step_name: str = ""

    def row(self) -> dict[str, Any]:
        """The member's columns in ``group_members``."""
        return {
            "task": self.task,
            "harness": self.harness,
            "profile_name": self.profile,
            "use_worktree": None if self.use_worktree is None else int(self.use_worktree),
            "step_name": self.step_name,
        }


def parse_vars(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["key=value", …]`` as a dict; a malformed, empty-named or repeated key is an error."""
    values: dict[str, str] = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        key = key.strip()
        if not equals or not VAR_NAME.fullmatch(key):
            raise EccError(
                f"--var {pair!r} must be NAME=VALUE (NAME: letters, digits, '_' and '-')"
            )
        if key in values:
            raise EccError(f"--var {key} is given twice")
        values[key] = value
    return values


def _template(config: Any, name: str) -> Any:
    templates = config.orchestration_templates
    if name not in templates:
        known = ", ".join(sorted(templates))
        if not known:
            raise EccError(
                f"unknown template {name!r}: no [orchestration_templates.NAME] is configured"
            )
        raise EccError(f"unknown template {name!r} (known: {known})")
    return templates[name]


def resolve(
    config: Any, name: str, variables: dict[str, str], cwd: Path, task: str | None = None
) -> tuple[Any, list[Member]]:
    """The template ``name`` and its steps with every placeholder filled; see the module."""
    template = _template(config, name)
    given = {"cwd": str(cwd), **({"task": task} if task is not None else {}), **variables}
    used: set[str] = set()
    missing: set[str] = set()
    for step in template["steps"]:
        for found in PLACEHOLDER.findall(step["task"]):
            used.add(found)
            if found not in given:
                missing.add(found)
    if missing:
        raise EccError(
            f"template {name}: missing variable(s): {', '.join(sorted(missing))} "
            "(give each with --var NAME=VALUE)"
        )
    unused = sorted(set(variables) - used)
    if unused:
        raise EccError(f"template {name} does not use variable(s): {', '.join(unused)}")
    members = []
    for index, step in enumerate(template["steps"], start=1):
        text = PLACEHOLDER.sub(lambda match: given[match.group(1)], step["task"])
        members.append(
            Member(
                task=text,
                harness=_blank_none(step.get("harness")) or _blank_none(template.get("harness")),
                profile=_blank_none(step.get("profile")) or _blank_none(template.get("profile")),
                use_worktree=_first_set(step.get("worktree"), template.get("worktree")),
                step_name=_blank_none(step.get("name")) or f"step {index}",
            )
        )
    return template, members


def _blank_none(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _first_set(*values: Any) -> bool | None:
    return next((bool(value) for value in values if value is not None), None)
