"""The ``ecc.memory.v1`` document format: its rules, validation and serialization, byte-exact
(reading a document's text is ``ecc.vault.parse``).

A memory is a Markdown file whose frontmatter holds thirteen ``key: <compact JSON>`` lines. The
rules (limits, messages, JavaScript whitespace semantics) follow the reference implementation so
that documents written by either tool are byte-identical and readable by the other.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from ecc.contract.errors import EccError

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

MEMORY_SCHEMA_VERSION = "ecc.memory.v1"
MEMORY_KINDS = ("context", "decision", "fact", "handoff", "lesson", "note", "preference", "runbook")
MEMORY_SCOPES = ("project", "team", "user")
MEMORY_TRUST_STATES = ("unreviewed",)
MEMORY_STATUSES = ("active", "rejected", "superseded")
DEFAULT_RECALL_SCOPES = ("project", "team")
MAX_BODY_BYTES = 65536
MAX_DOCUMENT_BYTES = 131072
MAX_TITLE_CHARS = 200
MAX_TAGS = 32
MAX_LINKS = 64
MAX_TARGET_HARNESSES = 32
MAX_ID_CHARS = 132
MAX_SLUG_CHARS = 64


class LazyPattern:
    """A regular expression compiled on first use.

    Parsing and validation need these; a warm search hardly does, and compiling every pattern at
    import (a Unicode class takes most of a millisecond) is paid by every ``ecc`` process.
    """

    __slots__ = ("_compiled", "_flags", "_pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self._pattern = pattern
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> str:
        return self._pattern

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._pattern, self._flags)
        return self._compiled

    def search(self, text: str, *args: int) -> re.Match[str] | None:
        return self.compiled.search(text, *args)

    def fullmatch(self, text: str, *args: int) -> re.Match[str] | None:
        return self.compiled.fullmatch(text, *args)

    def split(self, text: str) -> list[str]:
        return self.compiled.split(text)

    def findall(self, text: str) -> list[Any]:
        return self.compiled.findall(text)

    def sub(self, replacement: Any, text: str) -> str:
        return self.compiled.sub(replacement, text)


ID_RE = LazyPattern(r"mem_[a-z0-9][a-z0-9_-]{2,127}", re.ASCII)
SLUG_RE = LazyPattern(r"[a-z0-9][a-z0-9._-]{0,63}", re.ASCII)
# fixed positions: the parts are read by slicing (valid_instant)
TIMESTAMP_RE = LazyPattern(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z", re.ASCII
)

# (serialized key, object key) in serialization order; the body follows the frontmatter.
FIELDS: tuple[tuple[str, str], ...] = (
    ("schema", "schema"),
    ("id", "id"),
    ("title", "title"),
    ("kind", "kind"),
    ("scope", "scope"),
    ("trust", "trust"),
    ("status", "status"),
    ("source_harness", "sourceHarness"),
    ("target_harnesses", "targetHarnesses"),
    ("tags", "tags"),
    ("links", "links"),
    ("created_at", "createdAt"),
    ("updated_at", "updatedAt"),
)
OBJECT_KEYS: tuple[str, ...] = (*(obj for _, obj in FIELDS), "body")

# ECMAScript String.prototype.trim whitespace (differs from Python's str.strip()).
JS_WHITESPACE = (
    "\t\n\x0b\x0c\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009"
    "\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)
# Lone surrogates are not unsafe: JSON (the MCP server's input) can carry one, and the
# reference accepts and writes it (see well_formed and compact_json).
_UNSAFE = LazyPattern(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_UNSAFE_BODY = LazyPattern(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")


class MemoryFormatError(EccError):
    """A memory document or memory input that breaks the ``ecc.memory.v1`` rules."""


def js_trim(text: str) -> str:
    """Trim the way JavaScript's ``String.prototype.trim`` does."""
    return text.strip(JS_WHITESPACE)


def utf16_length(text: str) -> int:
    """Length in UTF-16 code units (the unit of the reference's character limits)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2  # lone surrogates count one


def well_formed(text: str) -> str:
    """``text`` with each lone surrogate as U+FFFD (JavaScript's ``toWellFormed``): what Node
    writes for one in a file or on a terminal, and what SQLite (UTF-8 only) can store."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def escape_surrogates(json_text: str) -> str:
    """JSON text with each lone surrogate written ``\\udxxx``, as ``JSON.stringify`` does (a raw
    one cannot be encoded as UTF-8; in JSON one only occurs inside a string)."""
    if json_text.isascii() or _SURROGATE.search(json_text) is None:
        return json_text
    return _SURROGATE.sub(lambda match: f"\\u{ord(match.group()):04x}", json_text)


def utf8_length(text: str) -> int:
    """UTF-8 bytes of ``text``, a lone surrogate counting 3 (as Node's U+FFFD does)."""
    if text.isascii():  # a flag of the string, not a scan: a byte a character
        return len(text)
    return len(text.encode("utf-8", "surrogatepass"))


def has_unsafe_characters(text: str, *, body: bool = False) -> bool:
    """True if ``text`` holds C0/C1 controls or bidi overrides.

    Bodies may contain TAB, LF and CR; nothing else may contain any control character.
    """
    if body and text.isascii():
        # the ASCII among the unsafe characters are the controls but TAB, LF and CR: deleting
        # every other ASCII byte leaves nothing exactly when none is there (one pass in C)
        return bool(text.encode().translate(None, _SAFE_ASCII_BODY))
    return (_UNSAFE_BODY if body else _UNSAFE).search(text) is not None


_SAFE_ASCII_BODY = bytes([9, 10, 13, *range(0x20, 0x7F)])


def as_non_empty_string(value: Any, label: str, max_chars: int = 10000) -> str:
    if (
        isinstance(value, str)
        and value.isascii()
        and value.isprintable()  # ASCII: no control character, the only space is " "
        and value[:1] not in ("", " ")
        and value[-1] != " "
        and len(value) <= max_chars
    ):
        return value
    if not isinstance(value, str) or not js_trim(value):
        raise MemoryFormatError(f"{label} must be a non-empty string.")
    trimmed = js_trim(value)
    if utf16_length(trimmed) > max_chars:
        raise MemoryFormatError(f"{label} is too long (maximum {max_chars} characters).")
    if has_unsafe_characters(trimmed):
        raise MemoryFormatError(
            f"{label} must not contain control or bidirectional formatting characters."
        )
    return trimmed


# The validators below first accept the common valid value with one test that implies every
# check of the general path (a full match of an ASCII pattern is trimmed, short and free of
# controls); anything else takes the general path, which gives the first problem's message.


def as_enum(value: Any, label: str, allowed: tuple[str, ...]) -> str:
    if value in allowed and isinstance(value, str):
        return value  # every allowed value is a short trimmed slug
    text = as_non_empty_string(value, label, MAX_SLUG_CHARS)
    if text not in allowed:
        raise MemoryFormatError(f"{label} must be one of: {', '.join(allowed)}.")
    return text


def as_slug(value: Any, label: str) -> str:
    if isinstance(value, str) and SLUG_RE.compiled.fullmatch(value):
        return value
    text = as_non_empty_string(value, label, MAX_SLUG_CHARS)
    if not SLUG_RE.fullmatch(text):
        raise MemoryFormatError(f"{label} must be a lowercase letters/numbers slug.")
    return text


def as_memory_id(value: Any) -> str:
    if isinstance(value, str) and ID_RE.compiled.fullmatch(value):
        return value  # at most 132 characters, as MAX_ID_CHARS allows
    text = as_non_empty_string(value, "memory id", MAX_ID_CHARS)
    if not ID_RE.fullmatch(text):
        raise MemoryFormatError(
            "memory id must match mem_<lowercase-id> and cannot contain a path."
        )
    return text


def as_array(value: Any, label: str, max_items: int, item: Callable[[Any], str]) -> list[str]:
    if not isinstance(value, list):
        raise MemoryFormatError(f"{label} must be an array.")
    if len(value) > max_items:
        raise MemoryFormatError(f"{label} has too many values (maximum {max_items}).")
    if not value:
        return []
    normalized: list[str] = []
    for entry in value:  # in turn, as the reference: a repeat is reported before a later bad one
        text = item(entry)
        if text in normalized:
            raise MemoryFormatError(f"{label} must not contain duplicate values.")
        normalized.append(text)
    return normalized


def valid_instant(text: str) -> bool:
    """Whether ``text``, of ``TIMESTAMP_RE``'s form, names an instant (the calendar's check
    of :func:`as_timestamp`)."""
    # hours, minutes and seconds are two digits each: compared as text (seconds to 59, as a
    # datetime takes them); the date's calendar check is kept per date, as dates repeat
    if text[11:13] > "23" or text[14:16] > "59" or text[17:19] > "59":
        return False
    date = text[:10]
    valid = _VALID_DATES.get(date)
    if valid is None:
        year, month, day = int(text[:4]), int(text[5:7]), int(text[8:10])
        try:
            # Year 0000 is valid in JavaScript (proleptic, leap); check its calendar with 2000.
            datetime(year or 2000, month, day)
            valid = True
        except ValueError:
            valid = False
        if len(_VALID_DATES) >= 4096:
            _VALID_DATES.clear()
        _VALID_DATES[date] = valid
    return valid


_VALID_DATES: dict[str, bool] = {}  # "YYYY-MM-DD" -> whether it is a calendar date


def as_timestamp(value: Any, label: str) -> str:
    if isinstance(value, str) and TIMESTAMP_RE.compiled.fullmatch(value) and valid_instant(value):
        return value
    text = as_non_empty_string(value, label, MAX_SLUG_CHARS)
    if TIMESTAMP_RE.fullmatch(text) is None or not valid_instant(text):
        raise MemoryFormatError(f"{label} must be an ISO-8601 timestamp.")
    return text


def as_body(value: Any) -> str:
    if not isinstance(value, str):
        raise MemoryFormatError("memory body must be a string.")
    if has_unsafe_characters(value, body=True):
        raise MemoryFormatError(
            "memory body must not contain unsafe control or bidirectional formatting characters."
        )
    body = js_trim(value)
    if not body:
        raise MemoryFormatError("memory body must contain non-whitespace context.")
    if utf8_length(body) > MAX_BODY_BYTES:
        raise MemoryFormatError(f"memory body is too large (maximum {MAX_BODY_BYTES} bytes).")
    return body


def normalize_memory(value: Any) -> dict[str, Any]:
    """Validate a memory object and return its normalized form (keys in canonical order).

    Raises :class:`MemoryFormatError` with the reference's message for the first problem found.
    """
    if not isinstance(value, Mapping):
        raise MemoryFormatError("memory must be an object.")
    targets = value.get("targetHarnesses")
    target_list = as_array(
        targets,
        "target harnesses",
        MAX_TARGET_HARNESSES,
        lambda entry: as_slug(entry, "target harness"),
    )
    if not target_list:
        raise MemoryFormatError('target harnesses must contain at least one harness or "all".')
    if value.get("schema") != MEMORY_SCHEMA_VERSION:
        raise MemoryFormatError("Unsupported memory schema.")
    normalized: dict[str, Any] = {"schema": MEMORY_SCHEMA_VERSION}
    normalized["id"] = as_memory_id(value.get("id"))
    normalized["title"] = as_non_empty_string(value.get("title"), "memory title", MAX_TITLE_CHARS)
    normalized["kind"] = as_enum(value.get("kind"), "memory kind", MEMORY_KINDS)
    normalized["scope"] = as_enum(value.get("scope"), "memory scope", MEMORY_SCOPES)
    normalized["trust"] = as_enum(value.get("trust"), "memory trust", MEMORY_TRUST_STATES)
    normalized["status"] = as_enum(value.get("status"), "memory status", MEMORY_STATUSES)
    normalized["sourceHarness"] = as_slug(value.get("sourceHarness"), "source harness")
    normalized["targetHarnesses"] = target_list
    normalized["tags"] = as_array(
        value.get("tags"), "tags", MAX_TAGS, lambda entry: as_slug(entry, "tag")
    )
    normalized["links"] = as_array(value.get("links"), "links", MAX_LINKS, as_memory_id)
    normalized["createdAt"] = as_timestamp(value.get("createdAt"), "created_at")
    normalized["updatedAt"] = as_timestamp(value.get("updatedAt"), "updated_at")
    normalized["body"] = as_body(value.get("body"))
    return normalized


def summary(memory: Mapping[str, Any]) -> dict[str, Any]:
    """The memory without its body (the shape of search results and acknowledgements)."""
    return {key: memory[key] for key in OBJECT_KEYS if key != "body"}


# json.dumps(value, ensure_ascii=False, separators=(",", ":")) builds an encoder a call
_COMPACT_ENCODE = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def compact_json(value: Any) -> str:
    """``value`` as the reference writes JSON: no spaces, non-ASCII as is, a lone surrogate as
    its ``\\udxxx`` escape (the frontmatter's values, a summary in the index)."""
    return escape_surrogates(_COMPACT_ENCODE(value))


def serialize_memory_document(memory: Mapping[str, Any]) -> str:
    """Render a memory as its ``ecc.memory.v1`` Markdown text (validated first).

    Byte for byte the reference's: a lone surrogate is ``\\udxxx`` in the frontmatter's JSON and
    U+FFFD in the body (Node's UTF-8 encoder), so the text always encodes as UTF-8.
    """
    normalized = normalize_memory(memory)
    lines = [f"{key}: {compact_json(normalized[obj])}" for key, obj in FIELDS]
    return "---\n" + "\n".join(lines) + "\n---\n\n" + well_formed(normalized["body"]) + "\n"


def now_timestamp() -> str:
    """The current UTC time as ``YYYY-MM-DDTHH:MM:SS.mmmZ`` (milliseconds, truncated)."""
    stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def new_memory_id(now: str) -> str:
    """``mem_<YYYYMMDD>_<20 hex digits of a random v4 UUID>``."""
    raw = bytearray(os.urandom(16))
    raw[6] = (raw[6] & 0x0F) | 0x40
    raw[8] = (raw[8] & 0x3F) | 0x80
    return f"mem_{now[0:4]}{now[5:7]}{now[8:10]}_{raw.hex()[:20]}"


def id_sort_key(memory_id: str) -> str:
    """Locale-independent key ordering IDs as the reference's ICU collation does.

    For the ID alphabet ICU orders ``_`` < ``-`` < digits < letters; code-point order would put
    ``-`` first. Mapping the two punctuation marks below the digits reproduces it exactly.
    """
    return memory_id.translate(_ID_KEY)


_ID_KEY = str.maketrans({"_": "\x01", "-": "\x02"})
