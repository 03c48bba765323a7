"""A valid document's text, stored as one compressed blob in the index.

Kept as text they made the index three times the size of the Markdown (the body twice, as read
and lower-cased). The blob is where the document's body lies in its text (``start length``), a
NUL and the text as read, deflated against a dictionary of the frontmatter's fixed lines; SQL
reads it through the functions registered by :func:`register`, which ``ScopeIndex`` exposes as
the ``texts`` view (``summary``, ``body``, ``body_l``, ``body_len``). The summary's JSON is made
only when asked for (a search's shown results, a read), by the same parsing that built the row:
a cold build no longer encodes one for every memory. A scoring query reads ``body_l`` several
times a row, so the last blob's texts are kept.
"""

from __future__ import annotations

import zlib

from ecc.vault import unicode17

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

# Part of the layout: changing it needs a new INDEX_VERSION.
_DICTIONARY = (
    b'---\nschema: "ecc.memory.v1"\nid: "mem_2026"\ntitle: ""\nkind: "note"\nscope: "project"\n'
    b'trust: "unreviewed"\nstatus: "active"\nsourceHarness: "claude"\ntargetHarnesses: ["all"]\n'
    b'tags: []\nlinks: []\ncreatedAt: "2026-01-01T00:00:00.000Z"\nupdatedAt: "2026-'
)
_WBITS = -15  # raw deflate: the blob carries no header or checksum

# Deflating is a cold index build's largest single cost. ISA-L's deflate (``isal``) at its level
# 1 writes the same raw deflate as zlib, as small as zlib's level 1 against the dictionary, in
# half the time (11 against 21 us a memory of 1.3 KB); reading it back is the stdlib's inflate.
_PACK_LEVEL = 1
_compressobj: Any = None  # isal's, imported by the first pack: a warm search never packs


def pack(text: str, body: str) -> bytes:
    """The blob of one valid document: its ``text`` as read and its parsed ``body``, which
    ends the text but for white space (any of its occurrences in the text gives it back)."""
    global _compressobj
    if _compressobj is None:
        from isal.isal_zlib import compressobj as _compressobj
    start = len(text) - len(body) - 1  # where a written document's body is: before its "\n"
    if start < 0 or not text.startswith(body, start):
        start = text.rfind(body)  # any occurrence holds the same text
        assert start >= 0, "the body is not in the text"
    deflate = _compressobj(
        _PACK_LEVEL, zlib.DEFLATED, _WBITS, 8, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY
    )
    return deflate.compress(f"{start} {len(body)}\0{text}".encode()) + deflate.flush()


class _Texts:
    """One blob's texts; the summary's JSON and the lower-cased body only once asked for."""

    __slots__ = ("_body_l", "_summary", "blob", "body", "text")

    def __init__(self, blob: bytes | None, text: str = "", body: str = "") -> None:
        self.blob, self.text, self.body = blob, text, body
        self._summary: str | None = None
        self._body_l: str | None = None

    @property
    def summary(self) -> str:
        if self._summary is None:
            from ecc.vault.format import compact_json, summary
            from ecc.vault.parse import parse_memory_document

            self._summary = compact_json(summary(parse_memory_document(self.text)))
        return self._summary

    @property
    def body_l(self) -> str:
        if self._body_l is None:
            self._body_l = unicode17.lower(self.body)  # from a UTF-8 file: no lone surrogate
        return self._body_l


# The last blob's texts: swapped whole, so a thread never sees another's mix.
_last = _Texts(None)


def _texts(blob: bytes) -> _Texts:
    global _last
    last = _last
    if blob is not last.blob and blob != last.blob:
        inflate = zlib.decompressobj(_WBITS, zdict=_DICTIONARY)
        where, _, text = (inflate.decompress(blob) + inflate.flush()).decode().partition("\0")
        start, _, length = where.partition(" ")
        body = text[int(start) : int(start) + int(length)]
        _last = last = _Texts(blob, text, body)
    return last


def unpack(blob: bytes) -> tuple[str, str]:
    """(summary JSON, body) of a blob."""
    texts = _texts(blob)
    return texts.summary, texts.body


def _summary(blob: bytes) -> str:
    return _texts(blob).summary


def _body(blob: bytes) -> str:
    return _texts(blob).body


def _body_l(blob: bytes) -> str:
    return _texts(blob).body_l


def register(db: sqlite3.Connection) -> None:
    """Make the ``texts`` view's functions known to ``db``."""
    db.create_function("memo_summary", 1, _summary, deterministic=True)
    db.create_function("memo_body", 1, _body, deterministic=True)
    db.create_function("memo_body_l", 1, _body_l, deterministic=True)
