"""Jinja2 for the pages: autoescape on every template, and the filters that show untrusted text.

Agents' output, tasks, tool inputs and reasons are untrusted: the templates never mark data
``|safe``, so every ``<`` is ``&lt;``; :func:`visible` also makes control characters (terminal
escapes, bidi overrides) visible as ``\\xNN``/``\\uNNNN`` instead of passing them to the page.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

TEMPLATES = Path(__file__).parent / "templates"
# C0 controls but tab, DEL, C1 controls, and the invisible format characters that reorder or
# hide text (bidi embeddings, overrides and isolates, zero-width joiners, BOM)
_HIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069\ufeff]")


def visible(value: Any, newlines: bool = False) -> str:
    """``value`` as text whose control characters are shown, not obeyed (``newlines``: keep
    line breaks, for multi-line text)."""
    text = "" if value is None else str(value)
    return _HIDDEN.sub(_keep_newline if newlines else _escape, text)


def _keep_newline(match: re.Match[str]) -> str:
    return "\n" if match.group() == "\n" else _escape(match)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def age(stamp: str | None, now: datetime | None = None) -> str:
    """``3s``, ``5m``, ``2h``, ``4d`` since an ISO-8601 time (``-`` when unknown)."""
    if not stamp:
        return "-"
    try:
        then = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return "-"
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = max(0, int(((now or datetime.now(UTC)) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def shorten(value: Any, limit: int = 80) -> str:
    text = " ".join(visible(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@cache
def environment() -> Any:
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=True,  # every template, whatever its name
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    from ecc.runtime.money import format_cost

    env.filters.update(visible=visible, age=age, shorten=shorten, cost=format_cost)
    return env


def render(template: str, **context: Any) -> str:
    return str(environment().get_template(template).render(**context))
