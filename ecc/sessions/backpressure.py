"""Back-pressure on a harness that prints faster than the store takes its lines.

The harness writes into its spool files (:mod:`ecc.sessions.spool`), which never block, so the
runner slows it itself: :class:`Throttle` pauses the harness's process group (SIGSTOP) while
the store is further behind than it catches up with in :attr:`Throttle.DRAIN_SECS` (at most
``output_backlog_bytes``, at least 64 KiB), and lets it go on (SIGCONT) below a quarter of
that. The runner's memory does not depend on it (the reader holds a bounded number of lines
whatever the backlog); what it bounds is the spool on disk and, above all, how long a stop
waits for the rest of the output to be stored. A paused harness loses nothing: its next
write simply happens later.

Why signals rather than a pipe through a bounded reader: a pipe would put the runner back in
the data path, and whatever sat in the pipe or in the reader when the runner was killed would
be lost; the spool files outlive the runner. Process-group signals need no cooperation from
the harness, and a stopped process takes no CPU. The group starts paused, so nothing runs
unwatched, and it is always let go before a stop or terminate signal (a stopped process
would not act on it) and once the harness is gone; if the runner dies while the group is
paused, the kernel itself wakes the orphaned group (SIGHUP, SIGCONT).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from ecc.sessions import procs

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ecc.sessions.capture import Writer

log = logging.getLogger("ecc.runner")


class Throttle(threading.Thread):
    """Pauses and resumes one harness's process group as the store falls behind its output.

    It looks every few milliseconds while the spool grows (a harness can write hundreds of MB a
    second), every 50 ms when it is quiet, and right after letting the group go it watches
    without sleeping, since a sleeping thread may wake late on a busy machine.
    :attr:`pauses` and :attr:`paused_secs` count the store's pauses only.
    """

    ACTIVE, PAUSED, QUIET = 0.002, 0.01, 0.05  # seconds between looks
    DRAIN_SECS = 0.5  # the most a backlog should take the store to catch up with
    FLOOR = 64 * 1024
    BURST_SECS, BURST_MOST_SECS = 0.02, 0.1  # how long a resume is watched closely
    SIGNAL_WAIT_SECS = 2.0  # how long a paused group waits for the stop signal it was promised

    def __init__(
        self,
        files: dict[str, Path],
        writer: Writer,
        backlog_bytes: int,
        held: Callable[[], int] = lambda: 0,
    ) -> None:
        super().__init__(name="ecc-throttle", daemon=True)
        self.files = files
        self.writer = writer
        self.held = held  # bytes of a line read but still without its newline
        self.most = max(int(backlog_bytes), self.FLOOR)
        self.rate: float | None = None  # bytes a second the store takes, measured under load
        self.group = 0
        self.pauses = 0
        self.paused_secs = 0.0
        self._paused_since: float | None = None
        self._store_paused = False  # the current pause is the store's (not the start's, a stop's)
        self._resume_by: float | None = None  # resume once a stop signal is pending, at the latest
        self._done = threading.Event()
        self._signals = threading.Lock()

    def watch(self, group: int) -> None:
        """Pause and resume process group ``group`` from now on. It starts paused and goes on
        at this thread's first look: however busy the machine, a flood cannot run ahead
        before anyone watches it."""
        self.group = group
        self._pause(by_store=False)
        self.start()

    def release(self, before_signal: bool = False) -> None:
        """Never pause the group again, and let it go on: at once, or, when a stop or terminate
        signal is about to be sent (``before_signal``), as soon as that signal is pending in
        the group; a running group is paused for that moment, so a harness stopped mid-flood
        adds nothing to the output still to be stored."""
        with self._signals:
            if before_signal and self.is_alive() and not self._done.is_set():
                if self._paused_since is None:
                    self._pause(by_store=False)
                if self._paused_since is not None:
                    self._resume_by = time.monotonic() + self.SIGNAL_WAIT_SECS
                    return  # the thread lets it go (_resume_when_signalled)
            self._done.set()
            self._resume()

    def run(self) -> None:
        fds = {}
        try:
            for stream, path in self.files.items():
                fds[stream] = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            last_size, last_change = -1, time.monotonic()
            samples: deque[tuple[float, int]] = deque()
            while not self._done.is_set():
                if self._resume_by is not None:
                    self._resume_when_signalled()
                    break
                written = _size(fds)
                now = time.monotonic()
                if written != last_size:
                    last_size, last_change = written, now
                stored = sum(self.writer.committed.get(stream, 0) for stream in fds)
                # what the store can take: an unfinished line waits for the harness, and
                # pausing the harness on it would wait forever
                backlog = written - stored - self.held()
                high = self._high(samples, now, stored, backlog)
                with self._signals:
                    if self._done.is_set() or self._resume_by is not None:
                        continue
                    if self._paused_since is None and backlog > high:
                        self._pause(by_store=True)
                    elif self._paused_since is not None and backlog < high // 4:
                        self._resume()
                        self._watch_burst(fds, stored + self.held() + high)
                        last_change = time.monotonic()
                if self._paused_since is not None:
                    wait = self.PAUSED
                else:
                    wait = self.ACTIVE if now - last_change < 0.2 else self.QUIET
                self._done.wait(wait)
        except OSError as exc:
            log.warning("output back-pressure stopped: %s", exc)
        finally:
            self.release()
            for fd in fds.values():
                os.close(fd)

    def _high(
        self, samples: deque[tuple[float, int]], now: float, stored: int, backlog: int
    ) -> int:
        """The backlog that pauses the harness now: the store's rate over the last second
        (measured only while it had a backlog to work on) times :attr:`DRAIN_SECS`."""
        if backlog <= 0:
            samples.clear()
        else:
            samples.append((now, stored))
            while now - samples[0][0] > 1.0:
                samples.popleft()
            began, first = samples[0]
            if now - began >= 0.25:
                self.rate = (stored - first) / (now - began)
        rate = self.rate or 0.0  # unknown yet: the floor, until the store shows its pace
        return int(min(self.most, max(self.FLOOR, rate * self.DRAIN_SECS)))

    def _watch_burst(self, fds: dict[str, int], limit: int) -> None:
        """Just after a resume, with the CPU still ours: look without sleeping until the spool
        passes ``limit`` (pause again), or stays still for :attr:`BURST_SECS` once it moved,
        or :attr:`BURST_MOST_SECS` pass. Holds ``_signals``."""
        began = time.monotonic()
        last = _size(fds)
        grew: float | None = None
        while True:
            written = _size(fds)
            now = time.monotonic()
            if written > limit:
                self._pause(by_store=True)
                return
            if written != last:
                last, grew = written, now
            if now - began > self.BURST_MOST_SECS or (grew and now - grew > self.BURST_SECS):
                return

    def _resume_when_signalled(self) -> None:
        """The group is paused and its stop signal on the way: let the leader (the supervisor)
        go first once the signal is pending there, then the rest once it has passed it on, so
        each harness process wakes up to its signal rather than to more printing."""
        assert self._resume_by is not None
        leader = self.group
        while not procs.signal_pending(leader) and time.monotonic() < self._resume_by:
            self._done.wait(self.ACTIVE)
        procs.signal_process(leader, signal.SIGCONT)
        children = procs.children(leader)
        settle = time.monotonic() + (0.2 if children else 0.02)
        while time.monotonic() < settle and not all(map(procs.signal_pending, children)):
            self._done.wait(self.ACTIVE)
        with self._signals:
            self._resume_by = None
            self._done.set()
            self._resume()

    def _pause(self, by_store: bool) -> None:
        if procs.signal_group(self.group, signal.SIGSTOP):
            self._paused_since = time.monotonic()
            self._store_paused = by_store
            self.pauses += by_store

    def _resume(self) -> None:
        if self._paused_since is not None:
            procs.signal_group(self.group, signal.SIGCONT)
            if self._store_paused:
                self.paused_secs += time.monotonic() - self._paused_since
            self._paused_since = None


def _size(fds: dict[str, int]) -> int:
    return sum(os.fstat(fd).st_size for fd in fds.values())
