"""Output capture of a session run: the reader thread and the runner's one store writer.

The :class:`Reader` reads the harness's stdout and stderr as they arrive and queues complete
lines; the :class:`Writer` is the only thread of a runner that writes to the store: it batches
output lines (one transaction per batch, up to :data:`BATCH_LINES`), feeds them to the
harness adapter's output parser, records what the parser finds (usage, tool calls, the harness's
own session id) and runs every other write the runner hands it, on its own connection.
"""

from __future__ import annotations

import logging
import os
import queue
import selectors
import threading
import time
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ecc.store.models import iso_from_epoch

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.runner")

MAX_LINE_BYTES = 64 * 1024
READ_CHUNK = 256 * 1024
BATCH_LINES = 5000


class Reader(threading.Thread):
    """Reads stdout and stderr of the harness as they arrive and queues complete lines.

    One thread for both pipes (a selector), so lines keep their arrival order across streams.
    Lines are split on ``\\n`` (a trailing ``\\r`` is dropped), decoded with ``errors="replace"``
    and capped at :data:`MAX_LINE_BYTES` (the rest of an over-long line is dropped and counted).
    """

    def __init__(self, pipes: dict[str, Any], sink: queue.Queue[Any]) -> None:
        super().__init__(name="ecc-reader", daemon=True)
        self.pipes = pipes
        self.sink = sink
        self.abandon = threading.Event()
        self.truncated = 0

    def run(self) -> None:
        selector = selectors.DefaultSelector()
        buffers: dict[str, bytearray] = {}
        skipping: dict[str, bool] = {}
        for stream, pipe in self.pipes.items():
            os.set_blocking(pipe.fileno(), False)
            selector.register(pipe.fileno(), selectors.EVENT_READ, stream)
            buffers[stream] = bytearray()
            skipping[stream] = False
        open_streams = len(self.pipes)
        try:
            while open_streams and not self.abandon.is_set():
                for key, _ in selector.select(timeout=0.2):
                    stream = key.data
                    try:
                        chunk = os.read(key.fd, READ_CHUNK)
                    except BlockingIOError:
                        continue
                    now = time.time()
                    if not chunk:
                        selector.unregister(key.fd)
                        open_streams -= 1
                        rest = buffers[stream]
                        if rest and not skipping[stream]:
                            self.sink.put((stream, now, [_decode(bytes(rest))]))
                        rest.clear()
                        continue
                    lines = self._split(stream, chunk, buffers, skipping)
                    if lines:
                        self.sink.put((stream, now, lines))
        finally:
            selector.close()
            self.sink.put(None)

    def _split(
        self, stream: str, chunk: bytes, buffers: dict[str, bytearray], skipping: dict[str, bool]
    ) -> list[str]:
        buf = buffers[stream]
        buf += chunk
        lines: list[str] = []
        start = 0
        while True:
            end = buf.find(b"\n", start)
            if end < 0:
                break
            if skipping[stream]:
                skipping[stream] = False
            elif end - start > MAX_LINE_BYTES:
                lines.append(self._truncated(buf[start : start + MAX_LINE_BYTES]))
            else:
                lines.append(_decode(bytes(buf[start:end])))
            start = end + 1
        del buf[:start]
        if len(buf) > MAX_LINE_BYTES:
            if not skipping[stream]:
                lines.append(self._truncated(buf[:MAX_LINE_BYTES]))
                skipping[stream] = True
            buf.clear()
        return lines

    def _truncated(self, head: bytearray) -> str:
        self.truncated += 1
        return _decode(bytes(head)) + " [line truncated]"


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


class Writer(threading.Thread):
    """The runner's one store writer: output batches, parsed events and every other write.

    Producers put ``(stream, read_time, [lines])`` for output, or ``(callable, Future)`` for
    any other write, which runs on this thread's own connection. ``None`` ends the output.
    """

    def __init__(
        self,
        opener: Callable[[], Store],
        session: Session,
        parser: Callable[..., Any] | None,
        first_seq: int,
    ) -> None:
        super().__init__(name="ecc-writer", daemon=True)
        self.opener = opener
        self.session = session
        self.hook = parser
        self.parser: Callable[..., Any] | None = None
        self.parser_resolved = False
        self.seq = first_seq
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.lines_written = 0
        self.failure: BaseException | None = None
        self.output_done = threading.Event()

    def call(self, fn: Callable[[Store], Any]) -> Any:
        """Run ``fn(store)`` on the writer thread and return its result (or raise its error)."""
        future: Future[Any] = Future()
        self.inbox.put((fn, future))
        return future.result()

    def close(self) -> None:
        self.inbox.put(("__close__", None))
        self.join()

    def run(self) -> None:
        store = self.opener()
        try:
            while True:
                item = self.inbox.get()
                batch: list[tuple[int, str, str, str]] = []
                calls: list[Any] = []
                closing = False
                while True:
                    if item is None:
                        self.output_done.set()
                    elif isinstance(item[0], str) and item[0] == "__close__":
                        closing = True
                    elif callable(item[0]):
                        calls.append(item)
                    else:
                        stream, read_time, lines = item
                        stamp = iso_from_epoch(read_time)
                        for line in lines:
                            self.seq += 1
                            batch.append((self.seq, stream, stamp, line))
                    if len(batch) >= BATCH_LINES:
                        break
                    try:
                        item = self.inbox.get_nowait()
                    except queue.Empty:
                        break
                if batch:
                    self._write_batch(store, batch)
                for fn, future in calls:
                    try:
                        future.set_result(fn(store))
                    except BaseException as exc:
                        future.set_exception(exc)
                if closing and self.inbox.empty():
                    return
        finally:
            store.close()

    def _write_batch(self, store: Store, batch: list[tuple[int, str, str, str]]) -> None:
        try:
            store.append_output(self.session.id, batch)
            self.lines_written += len(batch)
            store.heartbeat(self.session.id)
        except Exception as exc:  # keep capturing: a failed batch is reported, not fatal
            self.failure = exc
            log.error("writing %d output lines failed: %s", len(batch), exc)
            return
        if self.hook is not None and not self.parser_resolved:
            _, stream, _, line = batch[0]
            self.parser = owning_parser(self.hook, self.session.harness, line, stream)
            self.parser_resolved = True
        if self.parser is not None:
            for _, stream, _, line in batch:
                self._parse(store, line, stream)

    def _parse(self, store: Store, line: str, stream: str) -> None:
        if self.parser is None:
            return
        try:
            events = self.parser(harness=self.session.harness, line=line, stream=stream)
        except Exception as exc:
            log.warning("output parser failed on a line: %s", exc)
            return
        for event in events or ():
            try:
                apply_output_event(store, self.session, event)
            except Exception as exc:
                log.warning("could not record %s event: %s", getattr(event, "kind", "?"), exc)


def owning_parser(hook: Any, harness: str, line: str, stream: str) -> Callable[..., Any] | None:
    """The one ``ecc_parse_output_line`` implementation that parses ``harness``, or None.

    ``hook`` holds only the plugins that declare the harness (``PluginSet.harness_hook``), so
    one implementation is the parser whatever it answers for the first line. When several
    declare it, the first (in pluggy's order) that answers the first line owns the session, and
    later lines skip the hook machinery (a full pluggy call per line would cap capture
    throughput).
    """
    from ecc.runtime.plugins.calls import implementations

    found = implementations(hook)
    if len(found) == 1:
        return found[0]
    for impl in found:
        try:
            if impl(harness=harness, line=line, stream=stream) is not None:
                return impl
        except Exception as exc:
            log.warning("output parser %s failed: %s", impl.name, exc)
    return None


def apply_output_event(store: Store, session: Session, event: Any) -> None:
    """Record one :class:`ecc.contract.types.OutputEvent` parsed by the harness adapter."""
    data = event.data or {}
    if event.kind == "harness_session" and data.get("id"):
        store.update_session(session.id, harness_session_id=str(data["id"]))
    elif event.kind == "usage":
        from ecc.observability import budgets

        if budgets.record_usage(store, session.id, data):
            budgets.check(store, session_id=session.id)
    elif event.kind == "tool_call":
        store.record_tool_call(
            session_id=session.id,
            harness=session.harness,
            tool=str(data.get("tool") or "unknown"),
            input=data.get("input", {}),
            decision="observed",
        )
    else:
        store.add_event(session.id, f"output_{event.kind}", str(data.get("text", ""))[:2000], data)
