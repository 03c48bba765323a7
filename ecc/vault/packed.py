"""A valid document's summary and body, stored as one compressed blob in the index.

Kept as text they made the index three times the size of the Markdown (the body twice, as read
and lower-cased). The blob is the summary's JSON, a NUL (no JSON text or body holds one) and the
body, deflated against a dictionary of the summary's fixed keys; SQL reads it through the
functions registered by :func:`register`, which ``ScopeIndex`` exposes as the ``texts`` view
(``summary``, ``body``, ``body_l``, ``body_len``). A scoring query reads ``body_l`` several times
a row, so the last blob's texts are kept.
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
    b'{"schema":"ecc.memory.v1","id":"mem_2026","title":"","kind":"note","scope":"project",'
    b'"trust":"unreviewed","status":"active","sourceHarness":"claude","targetHarnesses":["all"],'
    b'"tags":[],"links":[],"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-'
)
_WBITS = -15  # raw deflate: the blob carries no header or checksum

# Deflating is a cold index build's largest single cost. ISA-L's deflate (``isal``) at its level
# 1 writes the same raw deflate as zlib, as small as zlib's level 1 against the dictionary, in
# half the time (11 against 21 us a memory of 1.3 KB); reading it back is the stdlib's inflate.
_PACK_LEVEL = 1
_compressobj: Any = None  # isal's, imported by the first pack: a warm search never packs


def pack(summary_json: str, body: str) -> bytes:
    """The blob of one document (its summary's JSON and its body)."""
    global _compressobj
    if _compressobj is None:
        from isal.isal_zlib import compressobj as _compressobj
    deflate = _compressobj(
        _PACK_LEVEL, zlib.DEFLATED, _WBITS, 8, zlib.Z_DEFAULT_STRATEGY, _DICTIONARY
    )
    return deflate.compress(f"{summary_json}\0{body}".encode()) + deflate.flush()


# (blob, summary, body, [body_l or None]): swapped whole, so a thread never sees another's mix.
_last: tuple[bytes | None, str, str, list[str | None]] = (None, "", "", [None])


def _texts(blob: bytes) -> tuple[bytes | None, str, str, list[str | None]]:
    global _last
    last = _last
    if blob is not last[0] and blob != last[0]:
        inflate = zlib.decompressobj(_WBITS, zdict=_DICTIONARY)
        summary, _, body = (inflate.decompress(blob) + inflate.flush()).decode().partition("\0")
        _last = last = (blob, summary, body, [None])
    return last


def unpack(blob: bytes) -> tuple[str, str]:
    """(summary JSON, body) of a blob."""
    texts = _texts(blob)
    return texts[1], texts[2]


def _summary(blob: bytes) -> str:
    return _texts(blob)[1]


def _body(blob: bytes) -> str:
    return _texts(blob)[2]


def _body_l(blob: bytes) -> str:
    texts = _texts(blob)
    lowered = texts[3][0]
    if lowered is None:
        lowered = texts[3][0] = unicode17.lower(texts[2])  # from a UTF-8 file: no lone surrogate
    return lowered


def register(db: sqlite3.Connection) -> None:
    """Make the ``texts`` view's functions known to ``db``."""
    db.create_function("memo_summary", 1, _summary, deterministic=True)
    db.create_function("memo_body", 1, _body, deterministic=True)
    db.create_function("memo_body_l", 1, _body_l, deterministic=True)
