"""ecc's marked sections in files a person also edits (``CLAUDE.md``, ``AGENTS.md``).

A section is the lines between ``<!-- BEGIN ecc sync: SURFACE -->`` and ``<!-- END ecc sync:
SURFACE -->``; ``ecc sync`` writes, replaces and removes only those, and the text around them
stays byte for byte as the person left it.
"""

from __future__ import annotations

import re

from ecc.contract.errors import EccError

_MARKER = re.compile(r"^<!-- (BEGIN|END) ecc sync: ([\w-]+) -->[ \t]*\r?$", re.MULTILINE)


def begin_marker(surface: str) -> str:
    return f"<!-- BEGIN ecc sync: {surface} -->"


def end_marker(surface: str) -> str:
    return f"<!-- END ecc sync: {surface} -->"


def section_body(text: str) -> str:
    """The text as written between the markers: ending in one newline unless it is empty."""
    return text if not text or text.endswith("\n") else text + "\n"


def find_sections(text: str, where: str) -> dict[str, tuple[int, int, str]]:
    """Surface -> (start of its BEGIN line, end of its END line and newline, the text between).

    Unbalanced, nested or repeated markers are refused: ecc cannot know which part is its own.
    """
    found: dict[str, tuple[int, int, str]] = {}
    open_surface: str | None = None
    start = body_start = 0
    for match in _MARKER.finditer(text):
        kind, surface = match.group(1), match.group(2)
        line_end = match.end() + 1 if text[match.end() : match.end() + 1] == "\n" else match.end()
        if kind == "BEGIN":
            if open_surface is not None or surface in found:
                raise EccError(
                    f"{where} has a repeated or nested 'ecc sync: {surface}' marker; "
                    "fix the file by hand, nothing was written"
                )
            open_surface, start, body_start = surface, match.start(), line_end
        else:
            if open_surface != surface:
                raise EccError(
                    f"{where} has an END 'ecc sync: {surface}' marker without its BEGIN; "
                    "fix the file by hand, nothing was written"
                )
            found[surface] = (start, line_end, text[body_start : match.start()])
            open_surface = None
    if open_surface is not None:
        raise EccError(
            f"{where} has a BEGIN 'ecc sync: {open_surface}' marker without its END; "
            "fix the file by hand, nothing was written"
        )
    return found


def put_section(text: str | None, surface: str, body: str, where: str) -> str:
    """``text`` with the section of ``surface`` replaced by ``body``, or appended at the end."""
    block = f"{begin_marker(surface)}\n{section_body(body)}{end_marker(surface)}\n"
    if not text:
        return block
    sections = find_sections(text, where)
    if surface in sections:
        start, end, _ = sections[surface]
        return text[:start] + block + text[end:]
    return text + ("\n" if text.endswith("\n") else "\n\n") + block


def drop_section(text: str, surface: str, where: str) -> str:
    """``text`` without the section of ``surface`` (its markers too) and the blank line that
    separated it, as :func:`put_section` appended it."""
    sections = find_sections(text, where)
    if surface not in sections:
        return text
    start, end, _ = sections[surface]
    before, after = text[:start], text[end:]
    if not after.strip():
        return before.rstrip("\n") + "\n" if before.strip() else ""
    if before.endswith("\n\n") and after.startswith("\n"):
        after = after[1:]
    return before + after


def strip_sections(text: str, where: str) -> str:
    """``text`` without any of ecc's sections: what a person wrote."""
    for surface in list(find_sections(text, where)):
        text = drop_section(text, surface, where)
    return text
