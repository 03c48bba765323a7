"""Helpers adapters share to land an agent profile on a CLI: number format and prompt folding.

The adapter kit: what the first-party adapters import beside the contract, as a third party
would (``ecc.adapterkit.hooks`` for the Claude-style hook protocol, ``.install`` for the install
dispatch).

A profile field a harness has no flag for is "folded" into the task text as a directive, in a
fixed order, so every adapter describes unsupported settings to the agent the same way.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.runtime.config.model import AgentProfile


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
