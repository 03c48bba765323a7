"""Helpers adapters share to land an agent profile on a CLI and to read its output.

The adapter kit: what the first-party adapters import beside the contract, as a third party
would. Here: profile folding and flags, argv values, JSON output lines; ``ecc.adapterkit.hooks``
the Claude-style command-hook protocol; ``ecc.adapterkit.install`` the install dispatch and the
harness config files.

A profile field a harness has no flag for is "folded" into the task text as a directive, in a
fixed order, so every adapter describes unsupported settings to the agent the same way.

Imported by every adapter, so by the session runner and ``ecc hook``: nothing heavy at import.
"""

from __future__ import annotations

import json

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from collections.abc import Callable, Collection
    from pathlib import Path
    from typing import Any

    from ecc.contract.types import ProfileTranslation
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


class ProfileFlags:
    """An ``ecc_translate_profile`` answer being built: the flags a harness gives the profile,
    the fields it refuses, and the rest folded into the prompt.

    ``flagged`` names the fields the prompt must not describe (they have a flag, or are
    refused); None when the harness maps every field and nothing is folded.
    """

    def __init__(self, profile: AgentProfile, flagged: Collection[str] | None = None) -> None:
        self.profile = profile
        self.flagged = flagged
        self.args: list[str] = []
        self.refused: dict[str, str] = {}

    def add(self, flag: str, value: object) -> None:
        """Pass ``value`` as the one argv element ``--flag=value`` (see :func:`opt`)."""
        self.args.append(opt(flag, value))

    def refuse(self, field: str, why: str) -> None:
        self.refused[field] = why

    def refuse_unknown(self, field: str, why: str, known: Collection[str]) -> None:
        """Refuse a value the harness has no equivalent of, listing the ``known`` ones."""
        self.refuse(field, f"{why} (known: " + ", ".join(known) + ")")

    def translation(self) -> ProfileTranslation:
        from ecc.contract.types import ProfileTranslation

        folded = "" if self.flagged is None else render_task("", self.profile, self.flagged)
        return ProfileTranslation(args=self.args, prompt_prefix=folded, refused=self.refused)


def refuse_if_any(harness: str, translation: object) -> None:
    """Raise :class:`ecc.contract.errors.EccError` naming every field ``harness`` refused."""
    from ecc.contract.errors import EccError

    refused = getattr(translation, "refused", None) or {}
    if refused:
        reasons = "; ".join(f"{name}: {why}" for name, why in refused.items())
        raise EccError(f"profile cannot run on {harness}: {reasons}")


def profile_flags(
    harness: str,
    profile: AgentProfile | None,
    translate: Callable[[str, AgentProfile], ProfileTranslation],
) -> list[str]:
    """The flags ``translate`` (the adapter's ``ecc_translate_profile``) gives ``profile``, none
    without a profile; a refused field stops the launch (:func:`refuse_if_any`)."""
    if profile is None:
        return []
    translation = translate(harness, profile)
    refuse_if_any(harness, translation)
    return translation.args


# -- argv, detection and output lines ----------------------------------------------------------


def opt(flag: str, value: object) -> str:
    """``--flag=value`` as one argv element: a value starting with ``-`` cannot become a flag."""
    return f"{flag}={value}"


def marked(name: str, project_dir: Path, markers: Collection[str]) -> str | None:
    """``name`` when ``project_dir`` holds one of ``markers`` (``ecc_detect_harness``)."""
    return name if any((project_dir / marker).exists() for marker in markers) else None


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


def table(value: object) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (output fields are untrusted)."""
    return value if isinstance(value, dict) else {}


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
