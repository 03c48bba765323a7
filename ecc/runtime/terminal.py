"""Neutralise terminal control sequences in untrusted text before it reaches a terminal.

Agent output, memory bodies and error messages may carry escape sequences that recolour, retitle
or rewrite a terminal (or hide text with bidi controls). Every human-readable line ecc prints
passes through :func:`sanitize`. ``--json`` output keeps every character of every value but spells
the dangerous ones as ``\\uXXXX`` escapes (:func:`json_text`), so a terminal never receives them.

The rules follow the reference vault's sanitiser exactly so both print the same text.
"""

from __future__ import annotations

import re

_STRING_TERMINATORS = ("\x07", "\x9c", "\x1b\\")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_FAST_SAFE = re.compile(
    r"[^\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]*"
)


def _drop_string(text: str, start: int) -> int:
    """Index after the terminator of a control string beginning at ``start`` (or end of text)."""
    best = len(text)
    for term in _STRING_TERMINATORS:
        found = text.find(term, start)
        if found != -1:
            best = min(best, found + len(term))
    return best


def _drop_csi(text: str, start: int) -> int:
    index = start
    while index < len(text):
        if 0x40 <= ord(text[index]) <= 0x7E:
            return index + 1
        index += 1
    return index


def sanitize(value: object) -> str:
    """Return ``value`` as text with control sequences and bidi controls removed."""
    if value is None:
        return ""
    text = value if isinstance(value, str) else str(value)
    if _FAST_SAFE.fullmatch(text):
        return text
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        code = ord(ch)
        if ch == "\x1b":
            nxt = text[i + 1] if i + 1 < n else ""
            if nxt and nxt in "PX]^_":
                i = _drop_string(text, i + 2)
            elif nxt == "[":
                i = _drop_csi(text, i + 2)
            else:
                i += 1
                while i < n and 0x20 <= ord(text[i]) <= 0x2F:
                    i += 1
                if i < n and 0x30 <= ord(text[i]) <= 0x7E:
                    i += 1
            continue
        if code in (0x90, 0x98, 0x9D, 0x9E, 0x9F):
            i = _drop_string(text, i + 1)
            continue
        if code == 0x9B:
            i = _drop_csi(text, i + 1)
            continue
        if (code <= 0x1F and ch not in "\t\n") or 0x7F <= code <= 0x9F or ch in _BIDI:
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


# What JSON output never prints raw, beyond the C0 controls ``json`` escapes itself: DEL and the C1
# controls, every Unicode format character (category Cf: bidi controls and marks, zero-width
# characters, the soft hyphen, tag characters), the line and paragraph separators, and lone
# surrogates (undecodable file-name bytes). Raw newlines in the output are indentation, not data.
_JSON_RISKY = (
    "[\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\ud800-\udfff"
    "\U000110bd\U000110cd\U00013430-\U00013438\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f]"
)


def _json_escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code > 0xFFFF:  # JSON spells a code point beyond the BMP as a UTF-16 surrogate pair
        code -= 0x10000
        return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"
    return f"\\u{code:04x}"


def json_text(payload: object, *, indent: int | None = 2) -> str:
    """How ``--json`` output is printed: stable JSON (2-space indented, or one line with
    ``indent=None``) whose control, bidi and invisible format characters are ``\\uXXXX`` escapes.

    The text still decodes to exactly the same values; other non-ASCII text stays readable.
    Such characters only ever occur inside JSON strings, where an escape means the same thing.
    """
    import json

    text = json.dumps(payload, indent=indent, ensure_ascii=False, default=str)
    if text.isascii() and "\x7f" not in text:  # the usual case: no pattern to compile (~0.5 ms)
        return text
    return re.sub(_JSON_RISKY, _json_escape, text)


def say(text: object = "", *, err: bool = False) -> None:
    """Print one line of human output with control sequences neutralised (every front's
    commands print through this and :func:`emit_json`; click is imported only to print)."""
    import click

    click.echo(sanitize(text), err=err)


def emit_json(payload: object, *, indent: int | None = 2) -> None:
    """Print ``payload`` through :func:`json_text` (escaped, never sanitised: values stay whole)."""
    import click

    click.echo(json_text(payload, indent=indent))
