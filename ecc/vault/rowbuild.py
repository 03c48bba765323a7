"""Documents' index rows: read each file, parse it, refuse suspected secrets and normalise the
fields search matches on. The cold index build spends its time here, so rows are built in chunks
(:func:`build_chunk`), and many new files by forked workers as well as by the caller
(:func:`build_rows`).
"""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable, Generator, Sequence

from ecc.vault import packed, ranking, unicode17
from ecc.vault.format import (
    MAX_DOCUMENT_BYTES,
    MemoryFormatError,
    id_sort_key,
    well_formed,
)
from ecc.vault.index import COLUMNS
from ecc.vault.parse import parse_memory_document
from ecc.vault.secrets import find_secrets_in_memory, may_hold_secret

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing on the hot path
if TYPE_CHECKING:
    from typing import Any

    from ecc.vault.backend import VaultStore

# Fewer new files than this are built in-process: starting a worker costs more than it saves.
PARALLEL_MIN = 1000
CHUNK = 256  # rows built at once (:func:`build_chunk`), and a worker sends back at once
MAX_WORKERS = 3


_EMPTY = (None,) * (len(COLUMNS) - 4)  # an invalid row: rel, stamp, nbytes and code only


def _delimited(values: Sequence[str]) -> str:
    """Each value between newlines: ``"\\na\\nb\\n"``, and ``"\\n"`` for none."""
    return "\n".join(["", *values, ""])


def build_chunk(
    store: VaultStore, scope: str, items: Sequence[tuple[str, str]]
) -> list[tuple[Any, ...]]:
    """The index rows of ``items`` ((rel, stamp) pairs; ``index.COLUMNS``), in order: each the
    document's, or an invalid row with its code.

    The work goes a step at a time over the whole chunk (read every file, then parse every
    text, then count every body's words...) rather than a document at a time: the same steps,
    but the interpreter keeps running one loop's code, and a cold build took a third less time
    (98 against 148 us a memory at 35,000).
    """
    rows: list[tuple[Any, ...] | None] = [None] * len(items)
    texts: list[str | None] = []
    for at, (rel, stamp) in enumerate(items):
        try:
            texts.append(store.read(scope, rel, MAX_DOCUMENT_BYTES))
        except Exception:
            texts.append(None)
            rows[at] = (rel, stamp, 0, "invalid-document", *_EMPTY)
    sizes = [
        0 if text is None else len(text) if text.isascii() else len(text.encode("utf-8"))
        for text in texts
    ]
    memories: list[dict[str, Any] | None] = []
    for at, text in enumerate(texts):
        memory = None
        if text is not None:
            rel, stamp = items[at]
            try:
                memory = parse_memory_document(text, rel)
            except MemoryFormatError:
                rows[at] = (rel, stamp, sizes[at], "invalid-document", *_EMPTY)
            else:
                if memory["scope"] != scope or rel != f"{memory['kind']}s/{memory['id']}.md":
                    rows[at] = (rel, stamp, sizes[at], "location-mismatch", *_EMPTY)
                    memory = None
        memories.append(memory)
    # from a UTF-8 file: no lone surrogate in the body
    lower, body_terms = unicode17.lower, ranking.body_terms
    terms = [None if memory is None else body_terms(lower(memory["body"])) for memory in memories]
    for at, memory in enumerate(memories):
        # the secret scan's cheap test reads the body's distinct words, not the body again
        words = terms[at]
        if (
            memory is not None
            and words is not None
            and may_hold_secret(memory, words[0])
            and find_secrets_in_memory(memory)
        ):
            rel, stamp = items[at]
            rows[at] = (rel, stamp, sizes[at], "suspected-secret", *_EMPTY)
            memories[at] = None
    pack = packed.pack
    blobs = [
        None if memory is None else pack(texts[at], memory["body"])  # type: ignore[arg-type]
        for at, memory in enumerate(memories)
    ]
    for at, memory in enumerate(memories):
        if memory is None:
            continue
        rel, stamp = items[at]
        meta = " ".join(
            [memory["kind"], memory["scope"], memory["sourceHarness"], *memory["targetHarnesses"]]
        ).lower()  # slugs: ASCII
        rows[at] = (
            rel,
            stamp,
            sizes[at],
            None,
            id_sort_key(memory["id"]),
            memory["kind"],
            memory["status"],
            memory["updatedAt"],
            # a title from JSON may hold a lone surrogate, which SQLite cannot store: U+FFFD in
            # the matched text (as the query's); the summary escapes it (``packed``)
            well_formed(lower(memory["title"])),
            _delimited(memory["tags"]),  # slugs: already lower-case ASCII
            meta,
            _delimited(memory["targetHarnesses"]),
            _delimited(memory["links"]),
            blobs[at],
            terms[at],
        )
    return rows  # type: ignore[return-value]  # every item has its row by now


def build_rows(
    store: VaultStore,
    scope: str,
    todo: Sequence[tuple[str, str]],
    *,
    parallel: bool,
    idle: Callable[[], bool] | None = None,
    forked: Callable[[], None] | None = None,
) -> Generator[tuple[Any, ...], None, None]:
    """The rows of ``todo`` ((rel, stamp) pairs), in order, exactly as :func:`build_chunk` makes
    them. With ``parallel`` (a store whose reads work in a forked child) and at least
    ``PARALLEL_MIN`` files, forked workers build chunks beside the caller; a worker that fails
    leaves its chunks to the caller. While a worker's chunk is awaited, the caller first runs
    ``idle`` (its own work on the rows it has, such as writing them; it returns whether it did
    any), and builds a later chunk itself only when there was none. ``forked`` is called once
    the workers are started, or when none will be (the caller may start threads then). Close
    the iterator when stopping early."""
    workers = _worker_count(len(todo)) if parallel else 0
    if workers:
        yield from _forked_rows(store, scope, todo, workers, idle or _nothing, forked)
    else:
        if forked is not None:
            forked()
        for at in range(0, len(todo), CHUNK):
            yield from build_chunk(store, scope, todo[at : at + CHUNK])


def _nothing() -> bool:
    return False


def _worker_count(files: int) -> int:
    if files < PARALLEL_MIN or not hasattr(os, "fork"):
        return 0
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return 0  # a fork copies no other thread, but could copy a lock one of them holds
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    cpus = cpus or 1
    if _load() >= cpus + 1:
        # no core to spare: a worker only adds the cost of handing rows back (a cold build at
        # 50,000 on 2 cores took 7.3 s instead of 10.1 at a load of 2.5, 10.8 s instead of 10.5
        # at 2.9 and 13.6 s instead of 11.5 at 6.5)
        return 0
    return max(0, min(cpus - 1, MAX_WORKERS))


def _load() -> float:
    """The last minute's load average (runnable processes), or 0 where there is none."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


# What the forked workers build from: set before the fork, so only chunk numbers are sent.
_job: tuple[Any, str, Sequence[tuple[str, str]], list[tuple[int, int]]] | None = None


def _chunk_rows(number: int) -> list[tuple[Any, ...]]:
    """The rows of chunk ``number`` of the current job (:func:`build_chunk`)."""
    assert _job is not None
    store, scope, todo, bounds = _job
    start, stop = bounds[number]
    return build_chunk(store, scope, todo[start:stop])


def _sent_chunk(number: int) -> bytes:
    """A worker's chunk as it goes back: ``marshal`` is a few times cheaper than pickle on both
    ends, and its loads interns again the words the worker interned (pickle made copies)."""
    return marshal.dumps(_chunk_rows(number))


def _received(data: bytes) -> list[tuple[Any, ...]]:
    """The rows of a chunk from :func:`_sent_chunk`, exactly as :func:`build_chunk` made them."""
    return marshal.loads(data)


def _forked_rows(
    store: VaultStore,
    scope: str,
    todo: Sequence[tuple[str, str]],
    workers: int,
    idle: Callable[[], bool],
    forked: Callable[[], None] | None,
) -> Generator[tuple[Any, ...], None, None]:
    """Chunks are handed out in order, a window of them ahead of the one the caller needs (so
    stopping early wastes little and memory stays bounded). While that chunk's worker is not
    done, the caller runs ``idle``, else takes the lowest chunk no worker has taken and builds
    it itself, ahead of its turn: how much the caller builds follows from how much else it
    has to do."""
    global _job
    from ecc.vault.crew import Crew

    bounds = [(at, min(at + CHUNK, len(todo))) for at in range(0, len(todo), CHUNK)]
    window = 8 * workers
    mine: dict[int, list[tuple[Any, ...]]] = {}  # the caller's chunks, built ahead of their turn
    _job = (store, scope, todo, bounds)
    crew = Crew.start(workers, _sent_chunk)
    try:
        if forked is not None:
            forked()
        for number in range(len(bounds)):
            rows = mine.pop(number, None)
            if rows is None and crew is not None and number in crew.results:
                rows = _received(crew.results.pop(number))  # sent before a worker failed
            while rows is None and crew is not None and not crew.failed:
                crew.hand_out(number + window, len(bounds))
                data = crew.take(number)
                if data is not None:
                    rows = _received(data)
                elif idle():
                    continue
                elif (claimed := crew.claim()) is not None:
                    mine[claimed] = _chunk_rows(claimed)
                    if claimed == number:
                        rows = mine.pop(number)
                else:
                    crew.poll(1.0)  # every chunk up to ours is being built: wait for it
            if rows is None:  # no worker, or one failed: the caller builds what it lacks
                rows = _chunk_rows(number)
            yield from rows
    finally:
        _job = None
        if crew is not None:
            crew.close()
