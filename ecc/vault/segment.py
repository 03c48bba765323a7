"""Building the ranking *segment* (``ecc.vault.ranking`` scores searches from it): per field, each
distinct word and which documents hold it how often, plus each document's kind and rank.

One builder serves both ways a segment is made: :func:`ecc.vault.ranking.build_segment` feeds it
every row of an index, and a cold index build (``ecc.vault.index.RowWriter``) feeds it each row
as it is written, so the postings are gathered while forked workers are still building later
rows instead of after the last one. Either way the rows come in docid order: a row's *slot* is
its position in that order.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Sequence

from ecc.vault import unicode17
from ecc.vault.format import MEMORY_KINDS

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

KIND_CODES = {kind: number + 1 for number, kind in enumerate(MEMORY_KINDS)}

# Rebuild the segment when the delta outgrows this or 1/32 of the segment, whichever is larger:
# the delta is scored row by row in SQL, the segment build costs about 40 µs a document.
MIN_DELTA = 256


def needs_build(size: int, delta: int) -> bool:
    """Whether a segment of ``size`` rows with ``delta`` rows indexed after it is worth
    rebuilding (a cold build's is worth writing when ``needs_build(0, rows)``)."""
    return delta > max(MIN_DELTA, size // 32)


def slot_typecode(size: int) -> str:
    """The array type of a segment's posting slots: two bytes a slot while they fit."""
    return "H" if size <= 1 << 16 else "I"


def _lines(delimited: str) -> list[str]:
    return delimited.split("\n")


class SegmentBuilder:
    """The postings of a segment, gathered a row at a time in docid order, then written."""

    def __init__(self) -> None:
        self.docids: list[int] = []
        self.flags = bytearray()  # a slot's kind code; 0: never a search result
        self.updated: list[str] = []
        self.id_keys: list[str] = []
        # field -> word -> (slots, values); presence fields keep slots only (every value is 1)
        self.body: dict[str, tuple[list[int], list[int]]] = {}
        self.present: dict[str, dict[str, list[int]]] = {field: {} for field in "tmgh"}

    @property
    def size(self) -> int:
        return len(self.docids)

    def add(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Add the next rows, each the ``docs`` columns (docid, code, status, kind, targets_d,
        title_l, tags_d, meta_l, updated_at, id_key) and its body's words and counts from
        ``ranking.body_terms`` (needed only for an active valid row). A step at a time over all
        the rows, as the rows themselves are built (``rowbuild.build_chunk``)."""
        base = len(self.docids)
        self.docids.extend([row[0] for row in rows])
        self.updated.extend([row[8] or "" for row in rows])
        self.id_keys.extend([row[9] or "" for row in rows])
        flags = self.flags
        active: list[tuple[int, tuple[Any, ...]]] = []  # (slot, row): the ones with postings
        for slot, row in enumerate(rows, base):
            if row[1] is not None or row[2] != "active":
                flags.append(0)  # never a search result: no postings
            else:
                flags.append(KIND_CODES[row[3]])
                active.append((slot, row))
        body = self.body
        for slot, row in active:
            for word, number in zip(*row[10], strict=True):
                entry = body.get(word)
                if entry is None:
                    body[word] = entry = ([], [])
                entry[0].append(slot)
                entry[1].append(number)  # at most 255 (``ranking.body_terms``)
        words = unicode17.words
        for field, column, split in (
            ("t", 5, words),
            ("m", 7, words),
            ("g", 6, _lines),
            ("h", 4, _lines),
        ):
            holders = self.present[field]
            distinct: dict[str, list[str]] = {}  # a text's words: the same texts come often
            for slot, row in active:
                text = row[column]
                found = distinct.get(text)
                if found is None:
                    found = distinct[text] = [word for word in set(split(text)) if word]
                for word in found:
                    slots = holders.get(word)
                    if slots is None:
                        holders[word] = slots = []
                    slots.append(slot)

    def write(self, db: sqlite3.Connection) -> None:
        """Replace the index's segment with this one, in the caller's transaction."""
        count = len(self.docids)
        postings: dict[str, tuple[list[int], Any]] = {f"b:{w}": e for w, e in self.body.items()}
        for prefix, holders in self.present.items():
            for word, slots in holders.items():
                postings[f"{prefix}:{word}"] = (slots, None)
        slot_type = slot_typecode(count)
        width = array(slot_type).itemsize
        updated, id_keys = self.updated, self.id_keys
        order = sorted(range(count), key=id_keys.__getitem__)  # id ascending
        order.sort(key=updated.__getitem__, reverse=True)  # newer first (stable)
        rank = array(slot_type, bytes(width * count))
        for position, slot in enumerate(order):
            rank[slot] = position
        records: list[tuple[str, bytes | None, bytes]] = []
        for key, (slots, values) in postings.items():
            if len(slots) * (width + 1) >= count:  # dense: a byte a document beats a posting
                dense = bytearray(count)
                if values is None:
                    for slot in slots:
                        dense[slot] = 1
                else:
                    for slot, value in zip(slots, values, strict=True):
                        dense[slot] = value
                records.append((key, None, bytes(dense)))
            else:
                ones = bytes([1]) * len(slots) if values is None else bytes(values)
                records.append((key, array(slot_type, slots).tobytes(), ones))
        vocab = {field: ["\n"] for field in "btm"}
        for key in postings:
            if key[0] in vocab:
                vocab[key[0]].append(f"{key[2:]}\n")
        db.execute("DELETE FROM seg_keys")
        db.executemany("INSERT INTO seg_keys VALUES(?, ?, ?)", records)
        db.execute("DELETE FROM removed")
        last = self.docids[-1] if count else 0
        meta = {
            "seg_last": last,
            "seg_size": count,
            "seg_docids": array(
                "I" if last < 1 << 32 else "q", self.docids
            ).tobytes(),  # its width follows from its length
            "seg_flags": bytes(self.flags),
            "seg_rank": rank.tobytes(),
            **{f"seg_vocab_{field}": "".join(words) for field, words in vocab.items()},
        }
        db.executemany("INSERT OR REPLACE INTO meta VALUES(?, ?)", list(meta.items()))
