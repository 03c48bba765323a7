"""Forked workers for the cold index build, with only pipes between them and the caller.

The caller hands out numbered pieces of work by writing their numbers to one task pipe; every
worker, and the caller itself when it has nothing better to do, takes the lowest number left
(a pipe read of four bytes is atomic), and a worker writes each result back on a pipe of its
own. No thread runs in the caller: with ``concurrent.futures`` the caller's queue threads had
to win the interpreter lock from a busy caller before a worker got its next piece or gave back
its last, and the worker sat idle about 12 ms a piece.

A worker stops at the end of the task pipe (everything handed out, or the caller gone: it
holds no write end) and when its result pipe has no reader; it ignores Ctrl-C, which reaches
the whole process group, so the caller alone handles it. A worker that fails or dies is
reported by :attr:`Crew.failed`; the caller then does the work itself.
"""

from __future__ import annotations

import os
import select
import signal
from collections.abc import Callable

_NUMBER = 4  # bytes of a piece's number in the task pipe
_HEADER = 12  # a result: its piece's number (4 bytes) and its length (8), then the data
_PIPE_BYTES = 1 << 20  # a result pipe's capacity where it can be raised (Linux)


class Crew:
    """Workers running ``work(number) -> bytes`` for the numbers handed out."""

    def __init__(self) -> None:
        self.tasks_read = self.tasks_write = -1
        self.handed = 0  # numbers below this were written to the task pipe
        self.workers: dict[int, int] = {}  # result pipe's read end -> pid
        self.buffers: dict[int, bytearray] = {}
        self.results: dict[int, bytes] = {}
        self.failed = False

    @classmethod
    def start(cls, size: int, work: Callable[[int], bytes]) -> Crew | None:
        """Fork ``size`` workers, or None when not even one could start."""
        crew = cls()
        try:
            crew.tasks_read, crew.tasks_write = os.pipe()
            os.set_blocking(crew.tasks_read, False)  # the caller's claims never wait
            for _ in range(size):
                crew._fork(work)
        except OSError:
            crew.close()
            return None
        return crew

    def _fork(self, work: Callable[[int], bytes]) -> None:
        read_end, write_end = os.pipe()
        try:
            _widen(write_end)
            pid = os.fork()
        except OSError:
            os.close(read_end)
            os.close(write_end)
            if self.workers:
                return  # fewer workers than asked for
            raise
        if pid == 0:  # the worker: whatever happens, it never returns into the caller's code
            try:
                os.close(read_end)
                os.close(self.tasks_write)
                for other in self.workers:
                    os.close(other)
                _serve(self.tasks_read, write_end, work)
            finally:
                os._exit(1)
        os.close(write_end)
        os.set_blocking(read_end, False)
        self.workers[read_end] = pid
        self.buffers[read_end] = bytearray()

    def hand_out(self, upto: int, total: int) -> None:
        """Make the numbers below ``upto`` (at most ``total``) available to the workers; the
        task pipe ends once all ``total`` have been handed out."""
        upto = min(upto, total)
        if self.failed or self.tasks_write < 0 or upto <= self.handed:
            return
        data = b"".join(n.to_bytes(_NUMBER, "little") for n in range(self.handed, upto))
        try:
            os.write(self.tasks_write, data)  # far below a pipe's capacity (a window of pieces)
        except OSError:
            self.failed = True
            return
        self.handed = upto
        if upto >= total:
            os.close(self.tasks_write)
            self.tasks_write = -1

    def claim(self) -> int | None:
        """The lowest number handed out that no worker has taken yet, taken by the caller."""
        try:
            raw = os.read(self.tasks_read, _NUMBER)
        except (BlockingIOError, InterruptedError):
            return None
        return int.from_bytes(raw, "little") if len(raw) == _NUMBER else None

    def take(self, number: int) -> bytes | None:
        """The result of ``number`` if it has arrived (read what the workers have sent)."""
        if number not in self.results:
            self.poll(0)
        return self.results.pop(number, None)

    def poll(self, timeout: float) -> None:
        """Read whatever results the workers have sent, waiting up to ``timeout`` seconds for
        the first; a worker that ended before its work was done marks the crew failed."""
        if not self.workers:
            self.failed = True
            return
        poller = select.poll()  # not select.select: no limit on the descriptors' numbers
        for fd in self.workers:
            poller.register(fd, select.POLLIN)
        for fd, _ in poller.poll(timeout * 1000):
            buffer = self.buffers[fd]
            while True:
                try:
                    data = os.read(fd, _PIPE_BYTES)
                except (BlockingIOError, InterruptedError):
                    break
                if not data:
                    self._ended(fd)
                    break
                buffer += data
            self._split(buffer)

    def _split(self, buffer: bytearray) -> None:
        while len(buffer) >= _HEADER:
            length = int.from_bytes(buffer[_NUMBER:_HEADER], "little")
            if len(buffer) < _HEADER + length:
                return
            number = int.from_bytes(buffer[:_NUMBER], "little")
            self.results[number] = bytes(buffer[_HEADER : _HEADER + length])
            del buffer[: _HEADER + length]

    def _ended(self, fd: int) -> None:
        pid = self.workers.pop(fd)
        os.close(fd)
        self.buffers.pop(fd)
        _, status = os.waitpid(pid, 0)
        if status != 0:  # only a worker that read the task pipe's end exits cleanly
            self.failed = True

    def close(self) -> None:
        """Stop the workers (killed if still working) and reap them."""
        for fd in (self.tasks_read, self.tasks_write):
            if fd >= 0:
                os.close(fd)
        self.tasks_read = self.tasks_write = -1
        for fd, pid in self.workers.items():
            os.close(fd)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
        self.workers.clear()
        self.buffers.clear()
        self.results.clear()


def _widen(fd: int) -> None:
    """A result pipe that holds a few results, so a worker seldom waits for the caller to
    read one (best effort: Linux alone can, up to its pipe-max-size)."""
    import fcntl

    setting = getattr(fcntl, "F_SETPIPE_SZ", None)
    if setting is not None:
        try:
            fcntl.fcntl(fd, setting, _PIPE_BYTES)
        except OSError:
            pass


def _serve(tasks: int, results: int, work: Callable[[int], bytes]) -> None:
    """A worker's life: take numbers until the task pipe ends, send each result back."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        waiting = select.poll()
        waiting.register(tasks, select.POLLIN)
        while True:
            try:
                raw = os.read(tasks, _NUMBER)
            except BlockingIOError:  # the pipe is non-blocking for the caller's claims
                waiting.poll()
                continue
            if len(raw) != _NUMBER:
                break  # everything handed out, or the caller gone
            number = int.from_bytes(raw, "little")
            data = work(number)
            message = memoryview(
                number.to_bytes(_NUMBER, "little") + len(data).to_bytes(8, "little") + data
            )
            while message:
                message = message[os.write(results, message) :]
        status = 0
    except BaseException:  # reported by the exit status: the caller redoes the work
        pass
    finally:
        os._exit(status)
