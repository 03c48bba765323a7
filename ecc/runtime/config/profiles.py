"""Agent profiles: how an ``inherits`` chain resolves into one profile's fields."""

from __future__ import annotations

from collections.abc import Mapping

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def resolve_profile(profiles: Mapping[str, Any], name: str) -> dict[str, Any]:
    """Apply the ``inherits`` chain of profile ``name``: the root first, then each child.

    Scalars are replaced by a child that sets them, lists are unioned in first-seen order, and
    ``append_system_prompt`` is joined parent-then-child with a blank line. Works on the
    pydantic models of ``ecc.runtime.config.model`` and on the tables of the cached view alike,
    so ``ecc run -d`` can resolve a profile without importing pydantic.
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


def agent_profile(config: Any, name: str) -> Any:
    """Profile ``name`` of ``config`` (the view or the model) resolved, as the typed
    ``AgentProfile`` adapters receive (this imports pydantic: only sessions with a profile)."""
    from ecc.runtime.config.model import AgentProfile

    return AgentProfile(**resolve_profile(config.agent_profiles, name))
