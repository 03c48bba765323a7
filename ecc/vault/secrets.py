"""Known credential shapes that a memory must never hold.

The ten patterns are the reference's. Unlike the reference, which scanned the JSON-escaped form of
a memory (so a token at the start of a line hid behind ``\\n`` and escaped the ``\\b`` boundary),
every string field is scanned as it is, and the JSON form as well.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

from ecc.vault.format import LazyPattern

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

SECRET_PATTERNS: tuple[tuple[str, LazyPattern], ...] = (
    ("provider API key", LazyPattern(r"\bsk-[A-Za-z0-9_-]{16,}\b", re.ASCII | re.IGNORECASE)),
    ("Stripe key", LazyPattern(r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b", re.ASCII)),
    ("npm token", LazyPattern(r"\bnpm_[A-Za-z0-9]{20,}\b", re.ASCII)),
    ("Hugging Face token", LazyPattern(r"\bhf_[A-Za-z0-9]{20,}\b", re.ASCII)),
    ("GitHub token", LazyPattern(r"\bgh[pors]_[A-Za-z0-9]{16,}\b", re.ASCII)),
    ("GitHub token", LazyPattern(r"\bgithub_pat_[A-Za-z0-9_]{16,}\b", re.ASCII)),
    ("Google API key", LazyPattern(r"\bAIza[A-Za-z0-9_-]{16,}\b", re.ASCII)),
    ("Slack token", LazyPattern(r"\bxox[baprs]-[A-Za-z0-9-]{10,}\b", re.ASCII)),
    ("AWS access key", LazyPattern(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b", re.ASCII)),
    ("private key", LazyPattern(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----", re.ASCII)),
)


def find_potential_secrets(text: Any) -> list[str]:
    """Labels of the secret shapes found in ``text``, in table order, without repeats."""
    return _scan([text] if isinstance(text, str) else [])


# Every pattern's match holds one of these, lower-cased (the patterns are ASCII, and lower()
# maps each ASCII letter to its ASCII lower case): a text holding none of them cannot match,
# which a few substring scans tell far faster than ten regular expressions (ten patterns of
# ``\b…`` give the regex engine no literal prefix to search for).
_MARKERS = (
    "sk-", "_live_", "npm_", "hf_", "ghp_", "gho_", "ghr_", "ghs_", "github_pat_", "aiza",
    "xoxb-", "xoxa-", "xoxp-", "xoxr-", "xoxs-", "akia", "asia", "-----begin ",
)  # fmt: skip


# The markers as they show in a text's word runs (``unicode17.words``): every marker but the
# private key's is made of word characters, and that one's run ends before its space.
_WORD_MARKERS = tuple(marker.rstrip(" ") for marker in _MARKERS)
_PLAIN_MARKERS = ("aiza", "akia", "asia")  # the markers without "_" or "-"
_IS_STR = str.__instancecheck__  # isinstance(item, str), callable from map() without a frame


def _may_hold_secret(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in _MARKERS)


def _scan(texts: Iterable[str], *, prefilter: bool = True) -> list[str]:
    texts = [text for text in texts if not prefilter or _may_hold_secret(text)]
    labels: list[str] = []
    for label, pattern in SECRET_PATTERNS:
        if label not in labels and any(pattern.search(text) for text in texts):
            labels.append(label)
    return labels


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def find_secrets_in_memory(memory: Mapping[str, Any]) -> list[str]:
    """Scan every raw string field of a memory, and its JSON form as the reference did.

    The fields are scanned as one text joined by newlines: no pattern matches a newline, and a
    newline is a word boundary just as a string's end is, so the result is the same as field by
    field, with two searches a pattern instead of one a field.

    The JSON form is only built when it can hold a marker the fields lack. It differs from them
    by its keys and punctuation (no marker there or across them) and by escapes: a backslash
    (no marker holds one) before ``n``, ``r``, ``t``, ``"`` or ``\\`` (a valid memory holds no
    other control character). So a marker only the JSON form holds starts with an escape's
    letter: ``npm_`` after a newline, the only marker starting with n, r or t.
    """
    parts: list[str] = []
    for value in memory.values():  # _strings(memory), without a generator a string
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list) and all(isinstance(item, str) for item in value):
            parts.extend(value)
        else:
            parts.extend(_strings(value))
    fields = "\n".join(parts)
    lowered = fields.lower()
    if "\npm_" not in lowered and not any(marker in lowered for marker in _MARKERS):
        return []
    return _scan([fields, json.dumps(dict(memory), ensure_ascii=False, separators=(",", ":"))])


def may_hold_secret(memory: Mapping[str, Any], body_words: Iterable[str]) -> bool:
    """False only when :func:`find_secrets_in_memory` finds nothing, told from the fields other
    than the body and the body's distinct lower-cased words (``ranking.term_counts``), which the
    index computes anyway: a few hundred characters to search instead of the whole body.

    Every pattern matches ASCII only, so a match in the body lies, lower-cased, inside one of its
    word runs (the private key's marker up to its space): a body marker shows in a word. The
    JSON form's ``npm_`` after an escaped newline shows as a word starting ``pm_``, which the
    ``\\npm_`` test catches since every word follows a newline here. Anything else only adds
    texts to search: a false alarm costs the full scan, never a missed secret.
    """
    parts: list[str] = []
    for key, value in memory.items():
        if key == "body":
            continue
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list) and all(map(_IS_STR, value)):
            parts.extend(value)
        else:
            parts.extend(_strings(value))
    # The fields and the words as two texts, each word after a newline as in one joined text
    # (no marker but "\npm_" holds a newline, so none spans the two): the ID and timestamps
    # hold "_" and "-", the words of prose seldom do, and then only the plain markers are sought.
    return _may_match("\n".join(parts).lower()) or _may_match("\n" + "\n".join(body_words).lower())


def _may_match(text: str) -> bool:
    """Whether a lower-cased text holds a marker as it shows in word runs (or ``\npm_``).
    The markers are tried by ``filter`` in C: a generator in ``any`` cost a fifth of a cold
    build's secret test."""
    if "_" not in text and "-" not in text:  # every other marker holds one of them
        return next(filter(text.__contains__, _PLAIN_MARKERS), None) is not None
    return "\npm_" in text or next(filter(text.__contains__, _WORD_MARKERS), None) is not None
