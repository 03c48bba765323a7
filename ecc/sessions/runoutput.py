"""One run's output, from the harness's spool files to the store.

:class:`RunOutput` puts together what the runner needs for a harness's stdout and stderr: the
spool (:mod:`ecc.sessions.spool`, held for the run), the store writer and the spool reader
(:mod:`ecc.sessions.capture`) and the back-pressure (:mod:`ecc.sessions.backpressure`). The
runner opens it before the harness starts, hands the harness its spool files, starts it with
the harness's process group, and finishes it once the harness is gone: the rest of the spool
is stored and the spool removed, or, when the store gave out, the spool stays for recovery.
"""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING, Any

from ecc.sessions import procs
from ecc.sessions.backpressure import Throttle
from ecc.sessions.capture import SpoolReader, Writer
from ecc.sessions.spool import Spool, drain_run, held_by_group, run_files

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecc.sessions.parsing import OutputParser
    from ecc.store.base import Store
    from ecc.store.models import Session

LEFTOVER_WAIT_SECS = 2.0  # children still writing after the harness exited get this long


class RunOutput:
    """The spool, writer, reader and throttle of one run (see the module)."""

    def __init__(
        self,
        store: Store,
        session: Session,
        config: Any,
        parser: OutputParser | None,
        on_failure: Callable[[], None],
    ) -> None:
        self.store = store
        self.session = session
        self.config = config
        self.parser = parser
        self.on_failure = on_failure
        self.spool = Spool(session.id, session.attempts or 1)
        self.writer: Writer
        self.reader: SpoolReader
        self.throttle: Throttle

    def open(self) -> dict[str, int]:
        """Take the spool (storing first what an earlier run left in it), start the writer, and
        return the files the harness writes to (``stdout``, ``stderr``; the caller closes them
        once the harness has them). An ``OSError`` means no spool could be made."""
        self.spool.open()
        try:
            self._drain_earlier_runs()
            fds = self.spool.harness_fds()
        except BaseException:
            self.spool.close(remove=False)
            raise
        store, session, run = self.store, self.session, self.spool.run
        cursors = store.spool_cursors(session.id, run)
        retry = float(self.config.store_retry_secs)
        self.writer = Writer(
            store.reopen, session, self.parser, run, cursors, store.max_seq(session.id), retry,
            on_failure=self.on_failure,
        )  # fmt: skip
        self.writer.start()
        self.reader = SpoolReader(self.spool.files, cursors, self.writer)
        backlog = int(self.config.output_backlog_bytes)
        self.throttle = Throttle(self.spool.files, self.writer, backlog, self.reader.held)
        return fds

    def start(self, group: int) -> None:
        """The harness runs as process group ``group``: watch it from its first byte."""
        self.throttle.watch(group)
        self.reader.start()

    def finish(self, group: int, stopping: bool) -> str | None:
        """After the harness exited: give children still writing to the spool a moment, end
        the group, store the rest, record what capture noticed, and remove the spool when every
        line is stored. Returns why output could not be stored, or None."""
        self.throttle.release()  # nothing of the group stays paused from here on
        self._end_leftover_processes(group, stopping)
        self.reader.finish()
        writer = self.writer
        writer.output_done.wait(timeout=output_wait_secs(self.config))
        notes = []
        if self.reader.truncated:
            notes.append(("output", f"{self.reader.truncated} over-long line(s) truncated"))
        if self.throttle.pauses:
            notes.append(
                (
                    "backpressure",
                    f"harness paused {self.throttle.pauses} time(s), "
                    f"{self.throttle.paused_secs:.1f}s in all, while the store caught up with "
                    "its output",
                )
            )
        sid = self.session.id
        window = 0.0 if writer.failure else None  # the store gave out: one try each, no more
        for kind, note in notes:
            with contextlib.suppress(Exception):
                writer.call(lambda db: db.add_event(sid, kind, note), window)  # noqa: B023
        failure = writer.failure or self.reader.error
        if failure is None and not writer.output_done.is_set():
            failure = "the store is still behind the harness's output; the rest stays spooled"
        if failure is None:
            self.spool.close(remove=True)  # every line is stored
        return failure

    def close(self, unused: bool = False) -> None:
        """After a successful :meth:`open`, whatever happened since: end the threads and the
        hold on the spool (never waits long). ``unused``: no harness ever wrote to it."""
        self.throttle.release()
        self.reader.abandon.set()
        self.writer.close()
        self.spool.close(remove=unused)  # otherwise kept, unless the run removed it when done

    def _drain_earlier_runs(self) -> None:
        """Store what an earlier run's spool still holds (its runner died) before this run."""
        session, spool = self.session, self.spool
        for run in spool.leftovers():
            files = run_files(spool.directory, run)
            stored = drain_run(self.store, session, run, files, self.parser)
            for path in files.values():
                path.unlink(missing_ok=True)
            if stored:
                note = f"{stored} line(s) left in the spool by run {run} stored"
                self.store.add_event(session.id, "output", note)

    def _end_leftover_processes(self, group: int, stopping: bool) -> None:
        """Children left behind still writing to the spool get a moment to finish, then the
        group is ended; a session never stays alive for them."""
        if not procs.group_alive(group):
            return
        grace = self.config.stop_grace_secs
        files = self.spool.files
        deadline = time.monotonic() + (5.0 if stopping else LEFTOVER_WAIT_SECS)
        while held_by_group(group, files) and time.monotonic() < deadline:
            time.sleep(0.05)
        if held_by_group(group, files):
            how = procs.terminate_group(group, grace)
            note = f"left-over harness processes ended by {how}"
            sid = self.session.id
            with contextlib.suppress(Exception):
                self.writer.call(lambda db: db.add_event(sid, "cleanup", note), 0.0)
        elif procs.group_alive(group):
            procs.terminate_group(group, grace)


def output_wait_secs(config: Any) -> float:
    """How long a run's end waits for the store to take the rest of its output (a failing
    store is tried for ``store_retry_secs``): the runner's bound, and ``ecc stop``'s for a
    runner that took the stop and is still storing."""
    return float(config.store_retry_secs) + 60.0
