"""Output read in byte-bounded batches, and output pages of bounded size written as they are read.

Captured lines may be 64 KiB each, so a count of lines says nothing about bytes: 5000 lines can be
300 MB. Both output routes therefore read the store in batches of about :data:`BATCH_BYTES` (the
number of rows per batch follows the size of the lines just read), and a page of
``GET /v1/sessions/{id}/output`` is sent batch by batch as JSON is encoded, so the server holds
about one batch whatever ``limit`` asks. A page also ends once its body reaches
``remote.max_response_bytes``: ``truncated`` is then true and ``next_after`` is where the next
page starts. A page holds at least one line, so a single line longer than the cap still passes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.store.base import Store

BATCH_BYTES = 1024 * 1024
MIN_BATCH_ROWS = 8
MAX_BATCH_ROWS = 1000
TRAILER_BYTES = 96  # room kept for the fields written after the lines


def encode(row: dict[str, Any]) -> bytes:
    """One line as compact JSON (lone surrogates, which UTF-8 cannot carry, become '?')."""
    text = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace")


def batches(
    store_of: Callable[[], Store],
    session_id: str,
    *,
    after: int,
    stream: str | None,
    limit: int | None = None,
) -> Iterator[list[dict[str, Any]]]:
    """Lists of rows with ``seq > after`` in order (``limit`` rows in all, if given), each list
    about :data:`BATCH_BYTES` of line text. ``store_of`` is called for every batch, so each may
    be read in another worker thread with that thread's connection."""
    rows_per_batch = MIN_BATCH_ROWS
    left = limit
    while left is None or left > 0:
        want = rows_per_batch if left is None else min(rows_per_batch, left)
        rows = store_of().read_output(session_id, after_seq=after, stream=stream, limit=want)
        if not rows:
            return
        yield rows
        if len(rows) < want:
            return
        after = rows[-1]["seq"]
        if left is not None:
            left -= len(rows)
        rows_per_batch = next_batch_rows(rows)


def next_batch_rows(rows: list[dict[str, Any]]) -> int:
    """How many rows to read next for about :data:`BATCH_BYTES`, judging by ``rows``."""
    if not rows:
        return MIN_BATCH_ROWS
    average = max(1, sum(len(row["line"]) for row in rows) // len(rows))
    return max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, BATCH_BYTES // average))


def output_page(
    store_of: Callable[[], Store],
    session: Any,
    *,
    after: int,
    limit: int,
    stream: str | None,
    max_bytes: int,
) -> Iterator[bytes]:
    """The JSON body of an :class:`~ecc.remote.schemas.OutputPage`, in pieces of about a batch.

    ``session`` is the session as read before the lines: ``finished`` says it was over then and
    no line is left after this page (its final state is written after its last line).
    """
    from ecc.store.models import TERMINAL

    head = json.dumps({"session_id": session.id, "state": session.state.value})
    opening = head[:-1].encode() + b',"lines":['
    yield opening
    budget = max_bytes - len(opening) - TRAILER_BYTES
    used = sent = 0
    last = after
    truncated = False
    for rows in batches(store_of, session.id, after=after, stream=stream, limit=limit):
        pieces = []
        for row in rows:
            data = encode(row)
            if sent and used + 1 + len(data) > budget:
                truncated = True
                break
            pieces.append(b"," + data if sent else data)
            used += len(pieces[-1])
            sent += 1
            last = row["seq"]
        if pieces:
            yield b"".join(pieces)
        if truncated:
            break
    more = truncated
    if not truncated and sent == limit:  # the limit ended the page: is a line left?
        more = bool(store_of().read_output(session.id, after_seq=last, stream=stream, limit=1))
    finished = session.state in TERMINAL and not more
    trailer = {"next_after": last, "finished": finished, "truncated": truncated}
    yield b"]," + json.dumps(trailer, separators=(",", ":"))[1:].encode()
