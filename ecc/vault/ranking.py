"""Search scoring from a columnar *segment* of the index: the reference's score, exactly, without
reading every body on every search.

For a lower-cased query ``q`` with unique tokens ``T`` a document scores (docs/memory.md; the
numbers are the weights table below, which the plain SQL expression in ``ecc.vault.search`` uses
too)::

    20 if q is in the title, else 5 if q is in the body
    + for each t in T: 8 if t is in the title, 6 if t is a tag, 3 if t is in the kind/scope/
      harness line, and min(5, non-overlapping occurrences of t in the body)

A token consists of word characters only (letters, numbers, ``_``, ``-``: ``unicode17``), so none of
its occurrences crosses a non-word character: ``t`` occurs in a text exactly as often as in the
text's word runs together, and it is in a text exactly when one of those words contains it. The
segment therefore keeps, per field, each distinct word and which documents hold it how often. A
search finds the words that contain each token (a scan of the field's word list) and adds
per-document vectors, one byte or two a document, with ``bytes.translate`` and Python's big
integers, so no Python loop runs once per document of the vault. The phrase bonus is checked only
for the documents that can still reach the top of the list.

Documents indexed after the segment was built (the *delta*) and segment rows removed since are
handled by ``ecc.vault.search``: the delta is scored by the plain SQL expression, removed rows are
masked out here, and the segment is rebuilt once the delta has grown.
"""

from __future__ import annotations

import bisect
import sys
from array import array
from collections import Counter
from collections.abc import Iterator
from itertools import compress

from ecc.vault import unicode17
from ecc.vault.format import MEMORY_KINDS
from ecc.vault.index import ScopeIndex
from ecc.vault.segment import KIND_CODES, SegmentBuilder, needs_build, slot_typecode

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

# The reference's lexical weights: the one table both scorers (this segment and the SQL expression
# of ecc.vault.search) read, so the two cannot drift apart.
PHRASE_IN_TITLE = 20  # the whole query in the title
PHRASE_IN_BODY = 5  # the whole query in the body (only when not in the title)
TOKEN_IN_TITLE = 8
TOKEN_IS_TAG = 6
TOKEN_IN_META = 3  # in the kind/scope/harness line
BODY_CAP = 5  # a token's occurrences in the body count up to this many

# Exactly the tokenizer's character classes, of the reference's Unicode version (``unicode17``).
WORD_RUN = unicode17.WORD_RUN

_ORDER = sys.byteorder
_CAP = bytes(min(BODY_CAP, value) for value in range(256))
_PRESENT = bytes([0]) + bytes([1]) * 255
_CHUNK = 900  # bound parameters per statement


# ASCII bytes to themselves when they are word characters of lower-cased text, else to a space.
_ASCII_WORDS = bytes(
    code if chr(code) in "0123456789abcdefghijklmnopqrstuvwxyz_-" else 32 for code in range(256)
)


def term_counts(body_l: str) -> Counter[str]:
    """The lower-cased body's distinct words and their counts (the segment's body postings)."""
    if body_l.isascii():  # the runs of unicode17.words, split by C code rather than a regex
        return Counter(body_l.encode().translate(_ASCII_WORDS).decode().split())
    return Counter(unicode17.words(body_l))


def body_terms(body_l: str) -> tuple[tuple[str, ...], bytes]:
    """:func:`term_counts` as kept in memory until the segment is built: the words interned
    (shared by every document holding them) and their counts as bytes, each capped at 255 as the
    segment keeps them (a score counts a token's occurrences up to BODY_CAP). Bytes are made in a
    quarter of an array's time, a worker sends them back as they are, and they take half its
    room."""
    counts = term_counts(body_l)
    values = counts.values()
    try:
        capped = bytes(values)
    except ValueError:  # a word more than 255 times
        capped = bytes([count if count < 256 else 255 for count in values])
    return tuple(map(sys.intern, counts)), capped


def _weight(weight: int) -> bytes:
    return bytes([0]) + bytes([weight]) * 255


# presence (0/1) to the points of a field (title, tag, kind/scope/harness line); 255 = mask
_TITLE, _TAG, _META, _MASK = (
    _weight(points) for points in (TOKEN_IN_TITLE, TOKEN_IS_TAG, TOKEN_IN_META, 255)
)


def _times_capped(factor: int) -> bytes:
    return bytes(min(BODY_CAP, value * factor) for value in range(256))


def segment_state(index: ScopeIndex) -> tuple[int, int, int]:
    """(last docid in the segment, its size, rows indexed after it)."""
    meta = index.get_meta("seg_last", "seg_size")
    last, size = int(meta.get("seg_last") or 0), int(meta.get("seg_size") or 0)
    delta = index.query("SELECT count(*) FROM docs WHERE docid > ?", (last,))[0][0]
    return last, size, delta


def build_segment(index: ScopeIndex) -> None:
    """Rebuild the segment from every row (one transaction; concurrent builders wait)."""
    db = index.db
    assert db is not None
    db.execute("BEGIN IMMEDIATE")
    try:
        _, size, delta = segment_state(index)
        if not needs_build(size, delta):  # someone else built it while we waited
            db.execute("COMMIT")
            return
        rows = db.execute(
            "SELECT docid, code, status, kind, targets_d, title_l, tags_d, meta_l,"
            " updated_at, id_key FROM docs ORDER BY docid"
        ).fetchall()
        terms = _terms(index, [row[0] for row in rows if row[1] is None and row[2] == "active"])
        builder = SegmentBuilder()
        builder.add([(*row, terms.get(row[0])) for row in rows])
        index.fresh_terms.clear()
        builder.write(db)
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _terms(index: ScopeIndex, docids: list[int]) -> dict[int, tuple[tuple[str, ...], bytes]]:
    """The body word counts of ``docids``: this process's fresh rows' from memory, the others'
    from their bodies (the index stores no counts; a rebuild after a later refresh reads them)."""
    fresh = index.fresh_terms
    terms = {docid: fresh[docid] for docid in docids if docid in fresh}
    missing = [docid for docid in docids if docid not in terms]
    for start in range(0, len(missing), _CHUNK):
        chunk = missing[start : start + _CHUNK]
        marks = ",".join("?" for _ in chunk)
        for docid, body_l in index.query(
            f"SELECT docid, body_l FROM texts WHERE docid IN ({marks})", chunk
        ):
            terms[docid] = body_terms(body_l)
    return terms


def _containing(vocab: str, token: str) -> list[str]:
    """Every word of a ``\\n``-delimited word list that contains ``token``."""
    words = []
    at = vocab.find(token)
    while at >= 0:
        start = vocab.rfind("\n", 0, at) + 1
        end = vocab.find("\n", at)
        words.append(vocab[start:end])
        at = vocab.find(token, end)
    return words


class Segment:
    """The segment of one scope index, loaded for one search."""

    def __init__(self, index: ScopeIndex) -> None:
        self.index = index
        meta = index.get_meta(
            "seg_last", "seg_size", "seg_docids", "seg_flags", "seg_rank",
            "seg_vocab_b", "seg_vocab_t", "seg_vocab_m",
        )  # fmt: skip
        self.last = int(meta.get("seg_last") or 0)
        self.size = int(meta.get("seg_size") or 0)
        docids = bytes(meta.get("seg_docids") or b"")
        self.docids = array("q" if self.size and len(docids) == 8 * self.size else "I")
        self.docids.frombytes(docids)
        self.flags = bytes(meta.get("seg_flags") or b"")
        self.slot_type = slot_typecode(self.size)
        self.rank = array(self.slot_type)
        self.rank.frombytes(meta.get("seg_rank") or b"")
        self.vocab = {field: str(meta.get(f"seg_vocab_{field}") or "\n") for field in "btm"}

    # -- vectors -------------------------------------------------------------------------------

    def _postings(self, keys: list[str]) -> Iterator[tuple[str, bytes | None, bytes]]:
        """(key, slots, values) of each key present: slots None means values are dense."""
        for start in range(0, len(keys), _CHUNK):
            chunk = keys[start : start + _CHUNK]
            marks = ",".join("?" for _ in chunk)
            yield from self.index.query(
                f"SELECT key, slots, vals FROM seg_keys WHERE key IN ({marks})", chunk
            )

    def _present(self, keys: list[str]) -> bytes:
        """One byte a document: 1 when any of ``keys`` holds it."""
        hits = bytearray(self.size)
        dense = 0
        for _key, slots, vals in self._postings(keys):
            if slots is None:
                dense |= int.from_bytes(vals.translate(_PRESENT), _ORDER)
            else:
                for slot in array(self.slot_type, slots):
                    hits[slot] = 1
        if dense:
            return (int.from_bytes(hits, _ORDER) | dense).to_bytes(self.size, _ORDER)
        return bytes(hits)

    def _body(self, token: str) -> bytes:
        """One byte a document: min(BODY_CAP, occurrences of ``token`` in the body)."""
        words = _containing(self.vocab["b"], token)
        factors = {f"b:{word}": word.count(token) for word in words}
        sparse = bytearray(self.size)
        dense = 0
        added = 0
        for key, slots, vals in self._postings(list(factors)):
            factor = factors[key]
            if slots is None:
                table = _CAP if factor == 1 else _times_capped(factor)
                dense += int.from_bytes(vals.translate(table), _ORDER)
                added += 1
                if added % 40 == 0:  # lanes reach 40 x BODY_CAP + BODY_CAP at most: < 256
                    dense = int.from_bytes(
                        dense.to_bytes(self.size, _ORDER).translate(_CAP), _ORDER
                    )
            else:
                for slot, value in zip(array(self.slot_type, slots), vals, strict=True):
                    total = sparse[slot] + value * factor
                    sparse[slot] = total if total < BODY_CAP else BODY_CAP
        if not dense:
            return bytes(sparse)
        total = int.from_bytes(sparse, _ORDER) + dense
        return total.to_bytes(self.size, _ORDER).translate(_CAP)

    def _widen(self, lanes: bytes) -> int:
        """8-bit lanes to 16-bit lanes (as a big integer in native order)."""
        wide = bytearray(2 * self.size)
        if _ORDER == "little":
            wide[0::2] = lanes
        else:
            wide[1::2] = lanes
        return int.from_bytes(wide, _ORDER)

    # -- search --------------------------------------------------------------------------------

    def top(
        self,
        lowered: str,
        tokens: list[str],
        kinds: list[str] | None,
        harness: str | None,
        limit: int,
    ) -> list[tuple[int, int]]:
        """The best ``limit`` (score, docid) of the segment, best first, ties newer then ID."""
        size = self.size
        if not size or not tokens:
            return []
        allowed = {KIND_CODES[kind] for kind in (kinds if kinds is not None else MEMORY_KINDS)}
        eligible = bytearray(self.flags.translate(bytes(
            255 if code in allowed else 0 for code in range(256)
        )))  # fmt: skip
        for (docid,) in self.index.query(
            "SELECT docid FROM removed WHERE docid <= ?", (self.last,)
        ):
            slot = bisect.bisect_left(self.docids, docid)
            if slot < size and self.docids[slot] == docid:
                eligible[slot] = 0
        if harness is not None:
            visible = self._present(["h:all", f"h:{harness}"]).translate(_MASK)
            eligible = bytearray(
                (int.from_bytes(eligible, _ORDER) & int.from_bytes(visible, _ORDER)).to_bytes(
                    size, _ORDER
                )
            )
        total = 0
        in_title = -1  # documents whose title holds every token (candidates for the phrase)
        body_of_single: bytes | None = None
        for token in tokens:
            body = self._body(token)
            title = self._present([f"t:{w}" for w in _containing(self.vocab["t"], token)])
            meta = self._present([f"m:{w}" for w in _containing(self.vocab["m"], token)])
            tag = self._present([f"g:{token}"])
            lanes = (
                int.from_bytes(body, _ORDER)
                + int.from_bytes(title.translate(_TITLE), _ORDER)
                + int.from_bytes(tag.translate(_TAG), _ORDER)
                + int.from_bytes(meta.translate(_META), _ORDER)
            )
            total += self._widen(lanes.to_bytes(size, _ORDER))
            in_title &= int.from_bytes(title, _ORDER)
            body_of_single = body
        wide_mask = bytearray(2 * size)
        wide_mask[0::2] = eligible
        wide_mask[1::2] = eligible
        total &= int.from_bytes(wide_mask, _ORDER)
        scores = array("H")
        scores.frombytes(total.to_bytes(2 * size, _ORDER))

        phrase_in_title: set[int] = set()
        if in_title > 0:
            slots = list(compress(range(size), in_title.to_bytes(size, _ORDER)))
            slots = [slot for slot in slots if scores[slot]]
            for docid in self._docids_where(slots, "docs", "instr(title_l, ?) > 0", lowered):
                slot = bisect.bisect_left(self.docids, docid)
                phrase_in_title.add(slot)
                scores[slot] += PHRASE_IN_TITLE

        ranked = sorted(scores, reverse=True)
        floor = ranked[limit - 1] if len(ranked) >= limit else 0
        threshold = max(1, floor - PHRASE_IN_BODY)  # the body phrase bonus is still to come
        candidates = list(compress(range(size), map(threshold.__le__, scores)))
        bonus = [slot for slot in candidates if slot not in phrase_in_title]
        if len(tokens) == 1 and lowered == tokens[0] and body_of_single is not None:
            body_hits = [slot for slot in bonus if body_of_single[slot]]
        else:
            docids = self._docids_where(bonus, "texts", "instr(body_l, ?) > 0", lowered)
            body_hits = [bisect.bisect_left(self.docids, docid) for docid in docids]
        for slot in body_hits:
            scores[slot] += PHRASE_IN_BODY
        best = sorted(candidates, key=lambda slot: (-scores[slot], self.rank[slot]))[:limit]
        return [(scores[slot], self.docids[slot]) for slot in best]

    def _docids_where(self, slots: list[int], table: str, condition: str, value: Any) -> list[int]:
        found: list[int] = []
        for start in range(0, len(slots), _CHUNK):
            chunk = [self.docids[slot] for slot in slots[start : start + _CHUNK]]
            marks = ",".join("?" for _ in chunk)
            found.extend(
                docid
                for (docid,) in self.index.query(
                    f"SELECT docid FROM {table} WHERE docid IN ({marks}) AND {condition}",
                    [*chunk, value],
                )
            )
        return found
