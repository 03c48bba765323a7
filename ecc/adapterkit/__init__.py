"""Helpers adapters share to land an agent profile on a CLI: number format and prompt folding.

A profile field a harness has no flag for is "folded" into the task text as a directive, in a
fixed order, so every adapter describes unsupported settings to the agent the same way.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.runtime.config.model import AgentProfile

PROFILE_FIELDS = (
    "model",
    "add_dirs",
    "allowed_tools",
    "disallowed_tools",
    "permission_mode",
    "max_budget_usd",
    "append_system_prompt",
    "token_budget",
)


def resolve_profile(profiles: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Apply the ``inherits`` chain of profile ``name``: the root first, then each child.

    Scalars are replaced by a child that sets them, lists are unioned in first-seen order, and
    ``append_system_prompt`` is joined parent-then-child with a blank line. Works on the
    pydantic models of ``ecc.runtime.config.model`` and on the plain tables of ``ecc.runtime.config.view`` alike, so
    ``ecc run -d`` can resolve a profile without importing pydantic.
    """
    from ecc.contract.errors import ConfigError

    def fields(profile: Any) -> dict[str, Any]:
        return profile.model_dump() if hasattr(profile, "model_dump") else dict(profile)

    chain: list[str] = []
    current: str | None = name
    while current is not None:
        if current in chain:
            raise ConfigError("agent profile inheritance cycle: " + " -> ".join([*chain, current]))
        if current not in profiles:
            raise ConfigError(f"Unknown agent profile: {current}")
        chain.append(current)
        current = fields(profiles[current]).get("inherits")
    merged: dict[str, Any] = {}
    for link in reversed(chain):
        for key, value in fields(profiles[link]).items():
            if key == "inherits" or value is None:
                continue
            if isinstance(value, list | tuple):
                seen = merged.setdefault(key, [])
                seen.extend(item for item in value if item not in seen)
            elif key == "append_system_prompt" and merged.get(key):
                merged[key] = f"{merged[key]}\n\n{value}"
            else:
                merged[key] = value
    return merged


def format_number(value: float) -> str:
    """Shortest round-trip decimal without a trailing ``.0`` (1.0 -> "1", 2.5 -> "2.5")."""
    text = repr(float(value))
    if text.endswith(".0"):
        text = text[:-2]
    return text


def render_task(task: str, profile: AgentProfile | None, supported: Collection[str]) -> str:
    """Fold every present profile field not in ``supported`` into the task text.

    ``token_budget`` is always folded when set: no CLI has a flag for it.
    """
    if profile is None:
        return task
    sections: list[str] = []
    if profile.append_system_prompt and "append_system_prompt" not in supported:
        sections.append("System instructions:\n" + profile.append_system_prompt)
    directives: list[str] = []
    if profile.model and "model" not in supported:
        directives.append(f"Preferred model: {profile.model}")
    if profile.add_dirs and "add_dirs" not in supported:
        directives.append("Additional context dirs: " + ", ".join(profile.add_dirs))
    if profile.allowed_tools and "allowed_tools" not in supported:
        directives.append("Allowed tools: " + ", ".join(profile.allowed_tools))
    if profile.disallowed_tools and "disallowed_tools" not in supported:
        directives.append("Disallowed tools: " + ", ".join(profile.disallowed_tools))
    if profile.permission_mode and "permission_mode" not in supported:
        directives.append(f"Permission mode: {profile.permission_mode}")
    if profile.max_budget_usd is not None and "max_budget_usd" not in supported:
        directives.append(f"Max budget USD: {format_number(profile.max_budget_usd)}")
    if profile.token_budget is not None:
        directives.append(f"Token budget: {profile.token_budget}")
    if directives:
        sections.append("ECC execution profile:\n- " + "\n- ".join(directives))
    if not sections:
        return task
    sections.append("Task:\n" + task)
    return "\n\n".join(sections)


# -- helpers adapters share to build argv safely ---------------------------------------------


def opt(flag: str, value: object) -> str:
    """``--flag=value`` as one argv element: a value starting with ``-`` cannot become a flag."""
    return f"{flag}={value}"


def refuse_if_any(harness: str, translation: object) -> None:
    """Raise :class:`ecc.contract.errors.EccError` naming every profile field ``harness`` refused."""
    from ecc.contract.errors import EccError

    refused = getattr(translation, "refused", None) or {}
    if refused:
        reasons = "; ".join(f"{name}: {why}" for name, why in refused.items())
        raise EccError(f"profile cannot run on {harness}: {reasons}")


def parse_json_line(line: str) -> dict[str, Any] | None:
    """The JSON object on one output line, or None for anything else (never raises)."""
    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def as_int(value: object) -> int:
    """A token count from untrusted JSON: ints as is, anything else 0."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return 0


def as_cost(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)
