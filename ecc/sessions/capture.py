"""Output capture of a session run: the spool reader and the runner's one store writer.

The harness writes into its spool (:mod:`ecc.sessions.spool`), never into the runner. The
:class:`SpoolReader` tails the spool files, splits them into lines and hands the writer a
bounded number of items (so the runner's memory stays bounded whatever the harness prints;
:mod:`ecc.sessions.backpressure` slows a harness that outpaces the store). The :class:`Writer`
is the only thread of a runner that writes to the store: it stores output in batches, each
moving the spool's cursors in the same transaction, feeds the lines to the adapter's parser
(:mod:`ecc.sessions.parsing`), and runs every other write the runner hands it, calls before
output. A store operation that fails with a passing error (locked, disk full, connection
lost) is tried again with backoff for ``store_retry_secs``; then the output is given up (it
stays in the spool for recovery) and the runner told, so the session ends failed with the
reason. Nothing here waits without a bound.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING, Any

from ecc.sessions.spool import (
    BATCH_LINES,
    MAX_LINE_BYTES,
    LineSplitter,
    SpoolTaken,
    end_item,
    read_items,
    rows_of,
)
from ecc.store.base import StoreError

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ecc.sessions.parsing import OutputParser
    from ecc.store.base import Store
    from ecc.store.models import Session

# the line cap, where callers have always found it
__all__ = [
    "MAX_LINE_BYTES",
    "SpoolReader",
    "Writer",
]

log = logging.getLogger("ecc.runner")

OUTPUT_ITEMS = 8  # read items waiting for the writer (each at most BATCH_LINES lines)
ATTEMPT_WAIT_SECS = 1.0  # how long one store attempt waits for another writer's lock
IDLE_POLL_SECS = (0.005, 0.2)  # the reader's first and longest wait for new output


class Inbox:
    """What the writer works through: calls (never refused) go before output items, of which
    at most ``limit`` wait; a reader that is further ahead waits (its output is in the spool)."""

    END: tuple[str] = ("end",)

    def __init__(self, limit: int) -> None:
        self.ready = threading.Condition()
        self.calls: deque[Any] = deque()
        self.output: deque[Any] = deque()
        self.limit = limit
        self.closed = False  # the writer has ended: a call would never be answered
        self.ending = False  # the writer is to end: a wait returns at once

    def put_call(self, op: Any) -> bool:
        with self.ready:
            if self.closed:
                return False
            self.calls.append(op)
            self.ready.notify_all()
            return True

    def close(self) -> list[Any]:
        """No more calls; returns those never run."""
        with self.ready:
            self.closed = True
            left = list(self.calls)
            self.calls.clear()
            return left

    def put_output(self, item: Any, timeout: float) -> bool:
        """Queue a read item; False when the queue stayed full for ``timeout`` seconds."""
        with self.ready:
            if not self.ready.wait_for(lambda: len(self.output) < self.limit, timeout):
                return False
            self.output.append(item)
            self.ready.notify_all()
            return True

    def put_end(self) -> None:
        with self.ready:
            self.output.append(self.END)
            self.ready.notify_all()

    def first_call(self) -> Any:
        with self.ready:
            return self.calls[0] if self.calls else None

    def done_call(self) -> None:
        with self.ready:
            self.calls.popleft()

    def take_output(self, max_lines: int) -> tuple[list[Any], bool]:
        """Waiting items up to about ``max_lines`` lines, and whether the end came with them."""
        items: list[Any] = []
        lines = 0
        with self.ready:
            while self.output and lines < max_lines:
                item = self.output.popleft()
                if item is self.END:
                    self.ready.notify_all()
                    return items, True
                items.append(item)
                lines += len(item[2])
            self.ready.notify_all()
        return items, False

    def wait(self, timeout: float, calls_only: bool = False) -> None:
        """Until there is work (a call, with ``calls_only``), the writer is to end, or
        ``timeout`` seconds pass."""
        with self.ready:
            self.ready.wait_for(
                lambda: self.ending or self.calls or (self.output and not calls_only), timeout
            )

    def end(self) -> None:
        """Wake the writer, and keep it from waiting again: it is to end. (A notify alone was
        lost on a wait whose condition still held no work: an idle writer took its whole
        5 s safety net to end, and every runner as long to exit after its session's end.)"""
        with self.ready:
            self.ending = True
            self.ready.notify_all()


class _Op:
    """One store operation being tried: a call, or a batch of output items."""

    __slots__ = ("deadline", "delay", "ends", "fn", "future", "items", "window")

    def __init__(self, window: float, fn: Any = None, future: Any = None) -> None:
        self.window = window
        self.deadline: float | None = None  # set by the first attempt
        self.delay = 0.05
        self.fn = fn
        self.future = future
        self.items: list[Any] = []
        self.ends = False


class Writer(threading.Thread):
    """The runner's one store writer: output batches, parsed events and every other write.

    ``call(fn)`` runs ``fn(store)`` on this thread's connection and returns its result (or
    raises its error); ``submit(fn)`` does not wait. Output comes from a :class:`SpoolReader`
    through :attr:`inbox`. :attr:`failure` says why output could not be stored (then
    :attr:`output_done` is set too and ``on_failure`` called); :attr:`committed` is how many
    bytes of each spool stream are stored.
    """

    def __init__(
        self,
        opener: Callable[[], Store],
        session: Session,
        parser: OutputParser | None,
        run: int,
        cursors: dict[str, tuple[int, bool]],
        first_seq: int,
        retry_secs: float,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        super().__init__(name="ecc-writer", daemon=True)
        self.opener = opener
        self.session = session
        self.parser = parser
        self.spool_run = run
        self.seq = first_seq
        self.retry_secs = retry_secs
        self.on_failure = on_failure
        self.inbox = Inbox(OUTPUT_ITEMS)
        self.committed = {stream: cursor[0] for stream, cursor in cursors.items()}
        self.lines_written = 0
        self.failure: str | None = None
        self.output_done = threading.Event()
        self.closing = threading.Event()
        self.store: Store | None = None

    def submit(self, fn: Callable[[Store], Any], window: float | None = None) -> Future[Any]:
        """Queue ``fn(store)``; tried for ``window`` seconds (default ``store_retry_secs``;
        0: once) while the store fails with a passing error."""
        future: Future[Any] = Future()
        if not self.inbox.put_call(_Op(self.retry_secs if window is None else window, fn, future)):
            future.set_exception(StoreError("the store writer has ended"))
        return future

    def call(self, fn: Callable[[Store], Any], window: float | None = None) -> Any:
        """Run ``fn(store)`` on the writer thread and return its result (or raise its error).
        Never waits without a bound: a store that does not even answer raises StoreError."""
        most = (self.retry_secs if window is None else window) + 2 * ATTEMPT_WAIT_SECS + 30.0
        try:
            return self.submit(fn, window).result(timeout=most)
        except FutureTimeout:
            raise StoreError(f"the store did not answer in {most:g}s") from None

    def close(self, timeout: float = 30.0) -> None:
        """Finish the calls already queued and end; output not yet stored stays in the spool."""
        self.closing.set()
        self.inbox.end()
        if self.is_alive():
            self.join(timeout)
        if self.is_alive():
            log.error("the store writer did not end within %gs; leaving it", timeout)

    # -- the thread ----------------------------------------------------------------------

    def run(self) -> None:
        batch: _Op | None = None
        try:
            while True:
                op = self.inbox.first_call()
                if op is not None:
                    if self._attempt(op):
                        self.inbox.done_call()
                    continue
                if self.closing.is_set():
                    return
                if batch is None:
                    batch = self._take_batch()
                if batch is None:
                    self.inbox.wait(5.0)  # woken by any new work; the timeout is a safety net
                elif self._attempt(batch):
                    batch = None
        finally:
            for op in self.inbox.close():  # from now on a call is refused at once
                if not op.future.done():
                    op.future.set_exception(StoreError("the store writer has ended"))
            self._drop_connection()

    def _take_batch(self) -> _Op | None:
        items, ends = self.inbox.take_output(BATCH_LINES)
        if not items and not ends:
            return None
        if self.failure is not None:  # given up: it stays in the spool for a later drain
            items = []
        if not items:
            if ends:
                self.output_done.set()
            return None
        batch = _Op(self.retry_secs)
        batch.items, batch.ends = items, ends
        return batch

    def _attempt(self, op: _Op) -> bool:
        """One try of ``op``; True when it is over (done, or failed for good)."""
        if op.deadline is None:
            op.deadline = time.monotonic() + op.window
        try:
            if self.store is None:
                self.store = self.opener()
                self.store.set_lock_wait(ATTEMPT_WAIT_SECS)
            if op.fn is not None:
                op.future.set_result(op.fn(self.store))
            else:
                self._store_batch(self.store, op)
            return True
        except Exception as exc:
            transient = self._transient(exc)
            if transient:
                self._drop_connection()  # the next attempt opens a fresh one
            if transient and time.monotonic() < op.deadline:
                self._back_off(op)
                return False
            if op.fn is not None:
                if transient:
                    exc = StoreError(f"{exc} (tried for {op.window:g}s)")
                op.future.set_exception(exc)
            else:
                self._give_up(exc, op.window if transient else None)
            return True

    def _store_batch(self, store: Store, op: _Op) -> None:
        rows, moves = rows_of(op.items, self.seq)
        if not store.append_spooled(self.session.id, self.spool_run, rows, moves):
            # an attempt that failed after its commit (a connection lost) already stored them
            cursors = store.spool_cursors(self.session.id, self.spool_run)
            if any(cursors.get(stream) != new for stream, (_, new) in moves.items()):
                raise SpoolTaken(f"another process stored output of session {self.session.id}")
        if rows:
            self.seq = rows[-1][0]
        self.lines_written += len(rows)
        for stream, (_, new) in moves.items():
            self.committed[stream] = new[0]
        if op.ends:
            self.output_done.set()
        try:
            store.heartbeat(self.session.id)
            if self.parser is not None:
                self.parser.feed(store, rows)
        except Exception as exc:  # stored already: never try the batch again for these
            log.warning("after storing %d lines: %s", len(rows), exc)

    def _transient(self, exc: Exception) -> bool:
        if isinstance(exc, SpoolTaken):
            return False
        errors = self.store.transient_errors if self.store is not None else (StoreError,)
        return isinstance(exc, errors)

    def _back_off(self, op: _Op) -> None:
        assert op.deadline is not None
        pause = min(op.delay, max(0.0, op.deadline - time.monotonic()))
        op.delay = min(op.delay * 2, 1.0)
        # a failing batch lets calls through meanwhile; a failing call keeps its place
        self.inbox.wait(pause, calls_only=True) if op.fn is None else time.sleep(pause)
        if self.closing.is_set() and op.fn is None:
            op.deadline = 0.0  # closing: the output stays in the spool

    def _give_up(self, exc: Exception, tried: float | None) -> None:
        self.failure = f"{exc}" + (f" (tried for {tried:g}s)" if tried is not None else "")
        log.error("output could not be stored: %s", self.failure)
        self.output_done.set()
        if self.on_failure is not None:
            self.on_failure()

    def _drop_connection(self) -> None:
        if self.store is not None:
            with contextlib.suppress(Exception):
                self.store.close()
            self.store = None


class SpoolReader(threading.Thread):
    """Tails one run's spool files into a writer's inbox, a bounded number of items ahead.

    :meth:`finish` says the harness is gone: read to the end (the last line without a newline
    too) and end the output. :attr:`error` is set when the spool could not be read.
    """

    def __init__(
        self, files: dict[str, Path], cursors: dict[str, tuple[int, bool]], writer: Writer
    ) -> None:
        super().__init__(name="ecc-reader", daemon=True)
        self.files = files
        self.splitters = {s: LineSplitter(*cursors.get(s, (0, False))) for s in files}
        self.writer = writer
        self.finishing = threading.Event()
        self.abandon = threading.Event()
        self.error: str | None = None

    @property
    def truncated(self) -> int:
        return sum(splitter.truncated for splitter in self.splitters.values())

    def held(self) -> int:
        """Bytes read that wait for the rest of their line: no store can take them yet."""
        return sum(len(splitter.buf) for splitter in self.splitters.values())

    def finish(self) -> None:
        self.finishing.set()

    def run(self) -> None:
        fds: dict[str, int] = {}
        try:
            for stream, path in self.files.items():
                fds[stream] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            idle = IDLE_POLL_SECS[0]
            while not self.abandon.is_set():
                final = self.finishing.is_set()  # all written before finish() is in the files
                # How far to read this round, stderr's size taken first: whatever reached stdout
                # before the last stderr line of the round is stored ahead of it, however long
                # handing the lines over takes.
                ends = {stream: os.fstat(fds[stream]).st_size for stream in reversed(fds)}
                got = False
                for stream, fd in fds.items():
                    splitter = self.splitters[stream]
                    while splitter.read_to < ends[stream]:
                        before = splitter.read_to
                        for item in read_items(splitter, fd, stream, ends[stream]):
                            if not self._hand(item):
                                return
                        if splitter.read_to == before:
                            break
                        got = True
                if got:
                    idle = IDLE_POLL_SECS[0]
                elif final:
                    break
                else:
                    self.finishing.wait(idle)
                    idle = min(idle * 2, IDLE_POLL_SECS[1])
            else:
                return
            for stream in fds:
                for item in end_item(self.splitters[stream], stream):
                    if not self._hand(item):
                        return
            self.writer.inbox.put_end()
        except OSError as exc:
            self.error = f"the output spool could not be read: {exc}"
            log.error("%s", self.error)
            self.writer.inbox.put_end()
        finally:
            for fd in fds.values():
                os.close(fd)

    def _hand(self, item: Any) -> bool:
        while not self.writer.inbox.put_output(item, timeout=0.1):
            if self.abandon.is_set():
                return False
        return True
