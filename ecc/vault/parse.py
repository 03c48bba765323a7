"""An ``ecc.memory.v1`` document's text to its normalized memory, by the reference's rules.

Every index build parses every changed document, so the shapes writers produce take
shortcuts: one pattern match for the usual frontmatter (``_common_memory``), one JSON scan a
line for the rest of the plain shape (``_common_frontmatter``). Each gives exactly what the
general line parser and :func:`ecc.vault.format.normalize_memory` give (tests compare them on
generated and hostile documents); anything else takes that general path, which names the first
problem as the reference does.
"""

from __future__ import annotations

import json
import re

from ecc.vault.format import (
    FIELDS,
    ID_RE,
    MAX_DOCUMENT_BYTES,
    MAX_LINKS,
    MAX_TAGS,
    MAX_TARGET_HARNESSES,
    MAX_TITLE_CHARS,
    MEMORY_KINDS,
    MEMORY_SCHEMA_VERSION,
    MEMORY_SCOPES,
    MEMORY_STATUSES,
    MEMORY_TRUST_STATES,
    SLUG_RE,
    TIMESTAMP_RE,
    LazyPattern,
    MemoryFormatError,
    as_array,
    as_body,
    as_non_empty_string,
    js_trim,
    normalize_memory,
    utf8_length,
    valid_instant,
)

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

_CLOSING = LazyPattern(r"\r?\n---(?=\r\n|\n|\Z)")
_LINE_BREAK = LazyPattern(r"\r?\n")
_FIELD_BY_KEY = dict(FIELDS)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-standard JSON constant {name}")


# json.loads(value, parse_constant=...) builds a decoder a call; one decoder serves every field.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)
_SCAN_VALUE = _DECODER.scan_once  # type: ignore[attr-defined]  # the C scanner: (value, end)
_LINE_PREFIXES = tuple((f"{key}: ", obj) for key, obj in FIELDS)


def _common_frontmatter(text: str, start: int, end: int) -> dict[str, Any] | None:
    """The fields of a frontmatter ``text[start:end]`` in the shape every writer produces (the
    thirteen ``key: <JSON>`` lines in order, LF endings, no padding), else None.

    Each value is decoded in place; what it decodes to is what the line parser would make of
    the line, since such a line holds nothing for its trimming to remove. Anything else (a
    stray space, CRLF, a value that is not one JSON value on its line) takes the line parser.
    """
    values: dict[str, Any] = {}
    at = start
    scan = _SCAN_VALUE
    for prefix, obj in _LINE_PREFIXES:
        if not text.startswith(prefix, at):
            return None
        line_end = text.find("\n", at, end)
        if line_end < 0:
            line_end = end
        try:
            value, value_end = scan(text, at + len(prefix))
        except (ValueError, StopIteration, RecursionError):
            return None
        if value_end != line_end:
            return None
        values[obj] = value
        at = line_end + 1
    return values if at == end + 1 else None


def _shape_of_common_memory() -> str:
    """The pattern of a frontmatter block (with its last line's LF) in the shape every writer
    produces, whose values are already what :func:`normalize_memory` would keep: the schema,
    ids, slugs and enumerations as their validators' own patterns and values accept them, a
    title without escapes, timestamps of the right form (their calendar is checked apart).
    Its groups are the fields after the schema, in order."""

    def string(pattern: str) -> str:
        return f'"({pattern})"'

    def strings(pattern: str) -> str:
        return rf'\[((?:"{pattern}")(?:,"{pattern}")*)?\]'

    def one_of(values: tuple[str, ...]) -> str:
        return string("|".join(map(re.escape, values)))

    slug, memory_id, instant = SLUG_RE.pattern, ID_RE.pattern, TIMESTAMP_RE.pattern
    values = {
        "schema": re.escape(json.dumps(MEMORY_SCHEMA_VERSION)),
        "id": string(memory_id),
        "title": string(r'[^"\\\x00-\x1f]*'),  # JSON text that is its own value
        "kind": one_of(MEMORY_KINDS),
        "scope": one_of(MEMORY_SCOPES),
        "trust": one_of(MEMORY_TRUST_STATES),
        "status": one_of(MEMORY_STATUSES),
        "sourceHarness": string(slug),
        "targetHarnesses": strings(slug),
        "tags": strings(slug),
        "links": strings(memory_id),
        "createdAt": string(instant),
        "updatedAt": string(instant),
    }
    return "".join(f"{key}: {values[obj]}\n" for key, obj in FIELDS)


_COMMON_MEMORY = LazyPattern(_shape_of_common_memory(), re.ASCII)


def _array(text: str | None, label: str, most: int) -> list[str]:
    """A matched array of plain strings (its values already valid) through :func:`as_array`,
    which refuses too many values and a repeat."""
    return as_array(text[1:-1].split('","') if text else [], label, most, str)


def _common_memory(text: str, start: int, end: int) -> dict[str, Any] | None:
    """The normalized memory (without its body) of a frontmatter ``text[start:end]`` in the
    common shape whose every value :func:`normalize_memory` accepts as it stands, else None.

    One pattern match stands in for thirteen JSON decodes and most validators' tests (a cold
    index build parses every document); what it cannot tell (counts and repeats in arrays, the
    title's trimming and length, a timestamp's calendar) is checked by the validators' own
    code. Anything else, valid or not, takes the general path, which gives the first problem's
    message.
    """
    match = _COMMON_MEMORY.compiled.fullmatch(text, start, end + 1)
    if match is None:
        return None
    memory_id, title, kind, scope, trust, status, source, targets, tags, links, created, updated = (
        match.groups()
    )
    if not (valid_instant(created) and valid_instant(updated)):
        return None
    try:
        target_list = _array(targets, "target harnesses", MAX_TARGET_HARNESSES)
        tag_list = _array(tags, "tags", MAX_TAGS)
        link_list = _array(links, "links", MAX_LINKS)
        title = as_non_empty_string(title, "memory title", MAX_TITLE_CHARS)
    except MemoryFormatError:
        return None
    if not target_list:
        return None
    return {  # normalize_memory's keys, in its order
        "schema": MEMORY_SCHEMA_VERSION,
        "id": memory_id,
        "title": title,
        "kind": kind,
        "scope": scope,
        "trust": trust,
        "status": status,
        "sourceHarness": source,
        "targetHarnesses": target_list,
        "tags": tag_list,
        "links": link_list,
        "createdAt": created,
        "updatedAt": updated,
    }


def _frontmatter(block: str, source: str) -> dict[str, Any]:
    """The fields of a frontmatter block, line by line with the reference's rules and messages."""
    values: dict[str, Any] = {}
    for line in _LINE_BREAK.split(block):
        colon = line.find(":")
        if colon < 1:
            raise MemoryFormatError(f"Invalid memory frontmatter line in {source}.")
        key = js_trim(line[:colon])
        if key not in _FIELD_BY_KEY:
            raise MemoryFormatError(f"Unknown memory frontmatter field in {source}.")
        obj_key = _FIELD_BY_KEY[key]
        if obj_key in values:
            raise MemoryFormatError(f"Duplicate memory frontmatter field in {source}.")
        try:
            values[obj_key] = _DECODER.decode(js_trim(line[colon + 1 :]))
        except (ValueError, RecursionError):
            raise MemoryFormatError(
                f"Memory frontmatter field in {source} must use a JSON value."
            ) from None
    missing = [obj for _, obj in FIELDS if obj not in values]
    if missing:
        raise MemoryFormatError(
            f"Memory document {source} is missing fields: {', '.join(missing)}."
        )
    return values


def _closing_marker(text: str, start: int) -> tuple[int, int] | None:
    """(start, end) of the first match of ``_CLOSING`` in ``text`` from ``start``, found with
    ``str.find`` (a few times faster than the pattern, which has no literal prefix to skip to):
    a line ``---`` (after LF or CRLF) that ends the text or is followed by a line break."""
    at = text.find("\n---", start)
    while at >= 0:
        after = at + 4
        if after == len(text) or text[after] == "\n" or text.startswith("\r\n", after):
            first = at - 1 if at > start and text[at - 1] == "\r" else at
            return first, after
        at = text.find("\n---", at + 1)
    return None


def parse_memory_document(text: str, source: str = "<memory>") -> dict[str, Any]:
    """Parse ``ecc.memory.v1`` text into a normalized memory.

    Raises only :class:`MemoryFormatError`; ``source`` names the document in messages.
    """
    if not isinstance(text, str) or not (text.startswith("---\n") or text.startswith("---\r\n")):
        raise MemoryFormatError(f"Memory document {source} must start with --- frontmatter.")
    if utf8_length(text) > MAX_DOCUMENT_BYTES:
        raise MemoryFormatError(f"Memory document {source} is too large.")
    start = 4 if text.startswith("---\n") else 5
    closing = _closing_marker(text, start)
    if closing is None:
        raise MemoryFormatError(f"Memory document {source} has no closing frontmatter marker.")
    body = text[closing[1] :]
    if body.startswith("\r\n"):
        body = body[2:]
    elif body.startswith("\n"):
        body = body[1:]
    if body.endswith("\r\n"):
        body = body[:-2]
    elif body.endswith("\n"):
        body = body[:-1]
    memory = _common_memory(text, start, closing[0])
    if memory is not None:
        memory["body"] = as_body(body)  # as normalize_memory checks it: after every field
        return memory
    values = _common_frontmatter(text, start, closing[0])
    if values is None:
        values = _frontmatter(text[start : closing[0]], source)
    values["body"] = body
    return normalize_memory(values)
