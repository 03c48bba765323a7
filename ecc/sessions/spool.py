"""The output spool: the files a session's harness writes its stdout and stderr into.

The harness writes straight into two append-only files in the session's private directory,
``<state dir>/spool/<session id>/<run>.stdout`` and ``<run>.stderr`` (``run`` is the session's
attempt number), never through the runner's memory. The runner tails them
(:mod:`ecc.sessions.capture`) and stores their lines in batches; each batch moves the stream's
cursor (bytes consumed, and whether it stopped inside an over-long line) in the same
transaction as its lines (:meth:`ecc.store.base.Store.append_spooled`). So whatever reached a
spool file survives the runner: a restarted runner, or the daemon when it finds a dead one,
stores exactly the rest with :func:`drain_spool`: no line lost, none stored twice.

The runner holds ``lock`` (an ``flock``, which the kernel drops when its holder dies) from
before the harness starts until the end; a drain takes it too, so two processes never read
one spool at once, and the cursor's compare-and-set keeps a part from being stored twice even
so. The directory goes once every line is stored and the run is over.

Lines are what ecc has always made of output (:class:`LineSplitter`): split on ``\\n`` (one
trailing ``\\r`` dropped), decoded with ``errors="replace"``, capped at :data:`MAX_LINE_BYTES`
(the rest of an over-long line is dropped and counted), a last line without a newline kept.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import time
from pathlib import Path

from ecc.sessions import procs
from ecc.store.models import iso_from_epoch

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ecc.sessions.parsing import OutputParser
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.runner")

STREAMS = ("stdout", "stderr")
MAX_LINE_BYTES = 64 * 1024
READ_CHUNK = 256 * 1024
BATCH_LINES = 5000  # lines per read item and per transaction: with READ_CHUNK, what bounds
# the runner's memory
LOCK_WAIT_SECS = 30.0  # how long a runner waits for a drain of its session's leftovers


class LineSplitter:
    """One stream's bytes into lines, keeping count of the bytes they consumed.

    ``consumed`` is the file offset just past the last complete line handed out (or skipped),
    ``skipping`` whether that offset is inside an over-long line whose head was handed out:
    together, the cursor a restarted reader goes on from.
    """

    def __init__(self, consumed: int = 0, skipping: bool = False) -> None:
        self.buf = bytearray()
        self.consumed = consumed
        self.skipping = skipping
        self.truncated = 0

    @property
    def cursor(self) -> tuple[int, bool]:
        return (self.consumed, self.skipping)

    @property
    def read_to(self) -> int:
        """The file offset of the next byte to read."""
        return self.consumed + len(self.buf)

    def feed(self, chunk: bytes) -> None:
        self.buf += chunk

    def lines(self, limit: int = BATCH_LINES) -> list[str]:
        """Up to ``limit`` complete lines of what was fed (the fast path splits and decodes a
        whole chunk at once: a newline byte is never part of a UTF-8 sequence, so that equals
        decoding line by line)."""
        buf = self.buf
        last = buf.rfind(b"\n")
        if last < 0:
            return self._overlong_rest()
        region = bytes(buf[:last])  # the complete lines, without the final newline
        parts = region.split(b"\n")
        limited = len(parts) > limit
        if limited:
            parts = parts[:limit]
            size = sum(map(len, parts)) + len(parts) - 1
        else:
            size = len(region)
        del buf[: size + 1]
        self.consumed += size + 1
        skip = 0
        if self.skipping:  # the first part is the tail of an over-long line, already handed out
            self.skipping = False
            skip = 1
        if skip == len(parts):
            lines: list[str] = []
        elif max(map(len, parts[skip:] if skip else parts)) > MAX_LINE_BYTES:
            lines = [
                self._truncated(part[:MAX_LINE_BYTES])
                if len(part) > MAX_LINE_BYTES
                else _decode(part)
                for part in parts[skip:]
            ]
        else:
            start = len(parts[0]) + 1 if skip else 0
            text = region[start:size].decode("utf-8", "replace")
            lines = text.split("\n")
            if "\r" in text:
                lines = [line[:-1] if line.endswith("\r") else line for line in lines]
        if not limited:
            lines += self._overlong_rest()
        return lines

    def _overlong_rest(self) -> list[str]:
        """A line longer than the cap before its newline came: its head now, the rest skipped."""
        buf = self.buf
        if len(buf) <= MAX_LINE_BYTES:
            return []
        lines = []
        if not self.skipping:
            lines.append(self._truncated(buf[:MAX_LINE_BYTES]))
            self.skipping = True
        self.consumed += len(buf)
        buf.clear()
        return lines

    def rest(self) -> list[str]:
        """At the end of the stream: the last line, which had no newline (if any)."""
        rest = bytes(self.buf)
        self.consumed += len(rest)
        self.buf.clear()
        return [_decode(rest)] if rest and not self.skipping else []

    def _truncated(self, head: bytes | bytearray) -> str:
        self.truncated += 1
        return _decode(bytes(head)) + " [line truncated]"


def _decode(raw: bytes) -> str:
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    return raw.decode("utf-8", "replace")


def read_items(
    splitter: LineSplitter, fd: int, stream: str, end: int | None = None
) -> list[tuple[Any, ...]]:
    """Read one chunk of ``fd`` (not past offset ``end``) from where ``splitter`` is and split
    it: items ``(stream, read time, lines, cursor before, cursor after)``, each within the
    batch limits; an item without lines moves the cursor past a skipped part. [] when no line
    came of it (nothing new, or only the start of one)."""
    size = READ_CHUNK if end is None else min(READ_CHUNK, end - splitter.read_to)
    if size <= 0:
        return []
    chunk = os.pread(fd, size, splitter.read_to)
    if not chunk:
        return []
    now = time.time()
    splitter.feed(chunk)
    items: list[tuple[Any, ...]] = []
    while True:
        before = splitter.cursor
        lines = splitter.lines()
        if not lines and splitter.cursor == before:
            return items
        items.append((stream, now, lines, before, splitter.cursor))


def spool_root() -> Path:
    from ecc.runtime import paths

    return paths.state_dir() / "spool"


def spool_dir(session_id: str) -> Path:
    return spool_root() / session_id


def run_files(directory: Path, run: int) -> dict[str, Path]:
    return {stream: directory / f"{run}.{stream}" for stream in STREAMS}


def runs_in(directory: Path) -> list[int]:
    """The runs with spool files in ``directory``, oldest first."""
    found = set()
    with contextlib.suppress(OSError):
        for name in os.listdir(directory):
            run, _, stream = name.partition(".")
            if stream in STREAMS and run.isdigit():
                found.add(int(run))
    return sorted(found)


def held_by_group(pgid: int, files: dict[str, Path]) -> bool:
    """Does a live process of group ``pgid`` still have one of ``files`` open (a child the
    harness left behind, still able to write)?"""
    return procs.group_holds_open(pgid, files.values())


class SpoolLock:
    """The ``flock`` on a spool directory: held by its runner, or by one drain at a time."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.fd: int | None = None

    def acquire(self, wait: float = 0.0) -> bool:
        """Take the lock (waiting up to ``wait`` seconds); False when someone else holds it
        or the directory is gone. A lock file deleted while we waited is not the lock: the
        directory's holder removed it, so look again."""
        import fcntl

        path = self.directory / "lock"
        deadline = time.monotonic() + wait
        while True:
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError:  # the directory is gone (or was never one)
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                try:
                    current: int | None = os.stat(path).st_ino
                except FileNotFoundError:
                    current = None
                if current == os.fstat(fd).st_ino:
                    self.fd = fd
                    return True
            except BlockingIOError:
                pass
            os.close(fd)
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.05)

    def remove_directory(self) -> None:
        """Delete the directory if no spool file is left in it (call while holding the lock)."""
        if runs_in(self.directory):
            return
        with contextlib.suppress(OSError):
            os.unlink(self.directory / "lock")
        with contextlib.suppress(OSError):
            os.rmdir(self.directory)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


class Spool:
    """One run's spool, held by its runner from before the harness starts to the end."""

    def __init__(self, session_id: str, run: int) -> None:
        self.session_id = session_id
        self.run = run
        self.directory = spool_dir(session_id)
        self.files = run_files(self.directory, run)
        self.lock = SpoolLock(self.directory)

    def open(self) -> None:
        """Create the directory (0700) and take its lock, waiting for a drain in progress."""
        from ecc.runtime import paths

        deadline = time.monotonic() + LOCK_WAIT_SECS
        while time.monotonic() < deadline:
            paths.ensure_private_dir(self.directory)
            if self.lock.acquire(wait=max(0.0, deadline - time.monotonic())):
                return
        raise OSError(errno.EBUSY, f"the output spool {self.directory} stays in use")

    def leftovers(self) -> list[int]:
        """Earlier runs whose spool files are still here (their runner died undrained)."""
        return [run for run in runs_in(self.directory) if run != self.run]

    def harness_fds(self) -> dict[str, int]:
        """This run's files opened for appending: the harness's stdout and stderr (the caller
        closes them once the harness has its own copies)."""
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        fds: dict[str, int] = {}
        try:
            for stream, path in self.files.items():
                fds[stream] = os.open(path, flags, 0o600)
        except OSError:
            for fd in fds.values():
                os.close(fd)
            raise
        return fds

    def close(self, *, remove: bool) -> None:
        """End the run's hold; with ``remove`` (every line stored) delete its files first."""
        try:
            if remove:
                for path in self.files.values():
                    with contextlib.suppress(FileNotFoundError):
                        path.unlink()
                self.lock.remove_directory()
        finally:
            self.lock.release()


def drain_run(
    store: Store, session: Session, run: int, files: dict[str, Path], parser: OutputParser | None
) -> int:
    """Store the rest of one finished run's spool files (nobody writes them any more);
    returns the lines stored. A store error propagates with the cursors where they were."""
    cursors = store.spool_cursors(session.id, run)
    splitters = {s: LineSplitter(*cursors.get(s, (0, False))) for s in files}
    fds = {}
    for stream, path in files.items():
        with contextlib.suppress(FileNotFoundError):
            fds[stream] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    seq = store.max_seq(session.id)
    stored = 0
    try:
        open_streams = list(fds)
        while open_streams:
            items: list[tuple[Any, ...]] = []
            for stream in list(open_streams):
                got = read_items(splitters[stream], fds[stream], stream)
                if not got:  # at the end: the last line without a newline, if any
                    open_streams.remove(stream)
                    got = end_item(splitters[stream], stream)
                items += got
            for batch in batches(items):
                rows, seq = commit_items(store, session.id, run, batch, seq)
                if parser is not None and rows:
                    parser.feed(store, rows)
                stored += len(rows)
    finally:
        for fd in fds.values():
            os.close(fd)
    return stored


def end_item(splitter: LineSplitter, stream: str) -> list[tuple[Any, ...]]:
    """At the end of a stream: the item of its last line without a newline (if any)."""
    before = splitter.cursor
    rest = splitter.rest()
    if not rest and splitter.cursor == before:
        return []
    return [(stream, time.time(), rest, before, splitter.cursor)]


def batches(items: list[tuple[Any, ...]]) -> list[list[tuple[Any, ...]]]:
    """Items grouped into transactions of about :data:`BATCH_LINES` lines."""
    groups: list[list[tuple[Any, ...]]] = []
    size = BATCH_LINES
    for item in items:
        if size + len(item[2]) > BATCH_LINES and size:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += len(item[2])
    return groups


def rows_of(
    items: list[tuple[Any, ...]], seq: int
) -> tuple[list[tuple[int, str, str, str]], dict[str, tuple[Any, Any]]]:
    """The rows ``(seq, stream, ts, line)`` of read items numbered after ``seq``, and each
    stream's cursor move (from before the first item to after the last)."""
    rows: list[tuple[int, str, str, str]] = []
    moves: dict[str, tuple[Any, Any]] = {}
    for stream, read_time, lines, before, after in items:
        stamp = iso_from_epoch(read_time)
        for line in lines:
            seq += 1
            rows.append((seq, stream, stamp, line))
        first = moves.get(stream)
        moves[stream] = (first[0] if first else before, after)
    return rows, moves


def commit_items(
    store: Store, session_id: str, run: int, items: list[tuple[Any, ...]], seq: int
) -> tuple[list[tuple[int, str, str, str]], int]:
    """Store read items as one transaction; returns the rows stored and the last seq. Raises
    :class:`SpoolTaken` when another reader stored part of them first (nothing is written)."""
    rows, moves = rows_of(items, seq)
    if not store.append_spooled(session_id, run, rows, moves):
        raise SpoolTaken(f"another process stored output of session {session_id} run {run}")
    return rows, rows[-1][0] if rows else seq


class SpoolTaken(Exception):
    """A spool cursor in the store had moved: another reader is storing this spool."""


def drain_spool(store: Store, session: Session, config: Any = None) -> int | None:
    """Store whatever a session's spool still holds, exactly once, and delete the spool.

    For a session whose runner is gone (recovery, a restarted runner): returns the number of
    lines stored, or None when the spool is in use (its runner lives, another drain runs) or
    the harness's process group still runs (it may still write; try again later). With
    ``config``, the harness adapter's output parser sees the lines, as it would have in the
    runner. A store error propagates; the cursors stay where they were, so the next call goes
    on from there.
    """
    directory = spool_dir(session.id)
    if not directory.is_dir():
        return 0
    lock = SpoolLock(directory)
    if not lock.acquire():
        return None
    try:
        return _drain_held(store, session, directory, config)
    finally:
        lock.release()


def _drain_held(store: Store, session: Session, directory: Path, config: Any) -> int | None:
    local = session.runner_host in (None, procs.hostname())
    if session.harness_pgid and local and procs.group_alive(session.harness_pgid):
        return None
    parser = None
    if config is not None:
        from ecc.sessions.parsing import OutputParser

        parser = OutputParser.for_session(config, session)
    stored = 0
    for run in runs_in(directory):
        files = run_files(directory, run)
        stored += drain_run(store, session, run, files, parser)
        for path in files.values():
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
    if stored:
        store.add_event(session.id, "output", f"{stored} spooled line(s) stored after the runner")
    SpoolLock(directory).remove_directory()
    return stored


def drain_leftovers(store: Store, config: Any = None) -> list[dict[str, Any]]:
    """:func:`drain_spool` for every spool on this machine that no runner holds any more (a
    runner killed, or one that gave up on a failing store); a spool of a session the store no
    longer has is deleted. Returns what was done."""
    done: list[dict[str, Any]] = []
    root = spool_root()
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return done
    for name in names:
        lock = SpoolLock(root / name)
        if not lock.acquire():
            continue  # its runner (or another drain) holds it
        try:
            session = store.get_session(name)
            if session is None:
                for run in runs_in(root / name):
                    for path in run_files(root / name, run).values():
                        with contextlib.suppress(FileNotFoundError):
                            path.unlink()
                lock.remove_directory()
                done.append({"id": name, "action": "spool of a forgotten session deleted"})
                continue
            stored = _drain_held(store, session, root / name, config)
        except Exception as exc:  # one bad spool must not keep the others undrained
            log.warning("draining the output spool of %s failed: %s", name, exc)
            continue
        finally:
            lock.release()
        if stored:
            done.append({"id": name, "action": "spool drained", "lines": stored})
    return done
