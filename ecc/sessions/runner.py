"""The runner: one process (or worker task) per session run.

It reads the session from the store, claims it at most once, lets its placement admit it (a
local runner waits for a slot or leaves the session queued) and prepare its directory (a
worktree here, or a checkout from a worker's mirror), has the adapter build the harness command
(:mod:`ecc.sessions.launching`), starts the harness in its own process group with stdin on
/dev/null and its stdout and stderr on the session's spool files, and records everything
through the store: output lines and what the adapter parses from them
(:mod:`ecc.sessions.runoutput`: spool, writer thread, back-pressure), heartbeats, the exit code
or signal, and the final state. The store failing for longer than ``store_retry_secs`` ends the
harness and the session as failed; the runner never waits on the store without a bound. A stop
request (the store flag, or SIGTERM to the runner) ends the harness's whole process group:
SIGTERM, grace, SIGKILL. What differs between this machine and a worker of a pool is the
placement's (:mod:`ecc.sessions.placement`), chosen once by the entry point:
:func:`run_session` (``ecc run-session``) or :func:`run_remote_session` (a pool's worker).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions import child_results, ending, launching, procs
from ecc.sessions.backpressure import Throttle
from ecc.sessions.capture import Writer
from ecc.sessions.enforcement import audit_enforcement
from ecc.sessions.placement import LocalPlacement, Placement, PoolPlacement
from ecc.sessions.runoutput import RunOutput
from ecc.store.models import TERMINAL, InvalidTransition, Session, State
from ecc.store.open import open_store

if TYPE_CHECKING:
    from concurrent.futures import Future

    from ecc.sessions.parsing import OutputParser

log = logging.getLogger("ecc.runner")


class Runner:
    """Runs one session, placed by ``placement`` (:class:`LocalPlacement` on this machine,
    :class:`PoolPlacement` on a worker of a pool). ``config`` is the validated config view."""

    def __init__(
        self,
        session_id: str,
        config: Any,
        placement: type[Placement] = LocalPlacement,
        host: str | None = None,
    ) -> None:
        self.session_id = session_id
        self.config = config
        self.host = host or procs.hostname()
        self.store = open_store(config=config)
        self.wake = threading.Event()
        self.stop_signal = threading.Event()
        self.pid = os.getpid()
        self.outcome = "not started"
        self.hooked_after: int | None = None  # with ecc's hook applied: the last call before it
        self.placement = placement(self.store, config, session_id, self.pid, self.host)

    # signals: SIGTERM/SIGINT/SIGHUP mean "stop the session" (the CLI's fast path)
    def _on_signal(self, signum: int, frame: Any) -> None:
        self.stop_signal.set()
        self.wake.set()

    def run(self) -> int:
        previous = {
            sig: signal.signal(sig, self._on_signal)
            for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
        }
        try:
            return self._run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _refuse(self, session: Session, why: str) -> int:
        self.store.add_event(
            session.id,
            self.placement.refusal_kind,
            f"{self.placement.refused_by()} refused: {why}",
            {"host": self.host, "pid": self.pid, "attempts": session.attempts},
        )
        self.outcome = "refused-duplicate"
        return 0

    def _run(self) -> int:
        session = self.store.get_session(self.session_id)
        if session is None:
            log.error("no session %s in %s", self.session_id, self.store.path)
            self.outcome = "unknown session"
            return 2
        if session.state not in (State.PENDING, State.QUEUED):
            return self._refuse(session, f"session is {session.state.value}")
        if not self.store.claim_runner(session.id, self.pid, self.host, procs.token(self.pid)):
            return self._refuse(session, "another runner owns the session")
        self.placement.claimed()
        try:
            if not self.placement.admit(session):
                return 0
            return self._run_claimed()
        except EccError as exc:  # refused with a reason (an adapter, the profile): no traceback
            self._fail(exc.message)
            return 1
        except Exception as exc:
            log.exception("runner failed")
            self._fail(f"runner error: {exc}")
            return 1
        finally:
            self.placement.end()
            with contextlib.suppress(Exception):
                self.store.close()

    def _parser(self, session: Session) -> OutputParser | None:
        from ecc.sessions.parsing import OutputParser

        return OutputParser.for_session(self.config, session)

    def _run_claimed(self) -> int:
        session = self.store.get_session(self.session_id)
        assert session is not None
        working = self.placement.prepare(session)
        fresh = self.store.get_session(self.session_id)
        waiting = (State.PENDING, State.QUEUED)
        if fresh is not None and fresh.stop_requested and fresh.state in waiting:
            self.store.transition(
                session.id, State.STOPPED, "stopped before it started", expect=[fresh.state]
            )
            return 0
        launch = launching.build(self.store, self.config, session, working)
        argv, env = launch.argv, launch.env
        self.hooked_after = launch.hooked_after
        self.store.add_event(
            session.id,
            "command",
            "harness command built",
            {"argv0": argv[0], "args": len(argv) - 1, "cwd": str(working)},
        )
        program = shutil.which(argv[0], path=env.get("PATH")) if "/" not in argv[0] else argv[0]
        if program is None or not os.access(working / program, os.X_OK):
            self._fail(f"cannot start {argv[0]}: No such file or directory")
            return 1
        output = RunOutput(self.store, session, self.config, self._parser(session), self.wake.set)
        try:
            fds = output.open()
        except OSError as exc:
            where = output.spool.directory
            self._fail(f"cannot prepare the output spool {where}: {exc.strerror or exc}")
            return 1
        grace = self.config.stop_grace_secs
        try:
            try:
                proc = subprocess.Popen(
                    [*supervisor_argv(self.pid, grace), *argv],
                    cwd=working,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=fds["stdout"],
                    stderr=fds["stderr"],
                    process_group=0,
                    close_fds=True,
                )
            finally:
                for fd in fds.values():
                    os.close(fd)
        except OSError as exc:
            output.close(unused=True)
            self._fail(f"cannot start {argv[0]}: {exc.strerror or exc}")
            return 1
        try:
            return self._supervise(session, proc, output)
        finally:
            output.close()

    def _supervise(self, session: Session, proc: subprocess.Popen[bytes], output: RunOutput) -> int:
        pgid = proc.pid
        token = procs.token(proc.pid)
        writer = output.writer
        output.start(pgid)  # from the harness's first byte: a flood must not run far ahead
        try:
            started = writer.call(
                lambda db: db.transition(
                    session.id,
                    State.RUNNING,
                    f"harness started (pid {proc.pid})",
                    expect=[State.PENDING, State.QUEUED],
                    harness_pid=proc.pid,
                    harness_pgid=pgid,
                    harness_token=token,
                    exit_code=None,
                    exit_signal=None,
                )
            )
        except InvalidTransition:  # stopped (or failed by the lease) while we were starting
            started = None
        if started is None or started.state != State.RUNNING:
            output.throttle.release(before_signal=True)
            procs.terminate_group(pgid, 0)
            return 1
        ending.notify(self.config, "session_started", session, f"started: {session.task[:80]}")
        waiter = threading.Thread(target=self._wait_exit, args=(proc,), daemon=True)
        waiter.start()
        stop_how = self._watch(session, proc, writer, output.throttle)
        ended_by = ""
        if writer.failure is not None and not stop_how:  # the store gave out: end the harness
            output.reader.abandon.set()
            output.throttle.release(before_signal=True)
            ended_by = procs.terminate_group(pgid, self.config.stop_grace_secs) or "its own exit"
        returncode = proc.wait()
        failure = output.finish(pgid, stopping=bool(stop_how or ended_by))
        return self._finish(session, returncode, stop_how, writer, failure, ended_by)

    def _watch(
        self, session: Session, proc: subprocess.Popen[bytes], writer: Writer, throttle: Throttle
    ) -> str:
        """Heartbeats and stop requests until the harness exits, the session is to stop (the
        stop's outcome is returned), or the store gives out. The heartbeat never holds this
        loop up: a slow store delays the beat, not the look at a stop request."""
        interval = self.placement.beat_interval()
        next_beat = time.monotonic() + interval
        beat: Future[Any] | None = None
        while proc.poll() is None and writer.failure is None:
            self.wake.wait(timeout=max(0.0, next_beat - time.monotonic()))
            self.wake.clear()
            if proc.poll() is not None or writer.failure is not None:
                break
            requested = self.stop_signal.is_set()
            if beat is not None and beat.done():
                fresh = None
                try:
                    fresh = beat.result()
                except Exception as exc:
                    log.warning("heartbeat failed: %s", exc)
                beat = None
                requested = requested or bool(fresh and fresh.stop_requested)
                if fresh is not None and fresh.state in TERMINAL:
                    # failed by the lease reaper (we were silent too long): never keep running
                    note = f"session is {fresh.state.value}; ending its process group"
                    writer.call(lambda db: db.add_event(session.id, "lease", note))  # noqa: B023
                    requested = True
            if beat is None and time.monotonic() >= next_beat:
                next_beat = time.monotonic() + interval
                beat = writer.submit(lambda db: _beat(db, session.id), window=0.0)
                beat.add_done_callback(lambda _: self.wake.set())
            if requested:
                return self._stop(session, proc.pid, writer, throttle)
        return ""

    def _wait_exit(self, proc: subprocess.Popen[bytes]) -> None:
        proc.wait()
        self.wake.set()

    def _stop(self, session: Session, pgid: int, writer: Writer, throttle: Throttle) -> str:
        fresh = writer.call(lambda db: db.get_session(session.id))
        grace = fresh.stop_grace if fresh and fresh.stop_grace is not None else None
        grace = self.config.stop_grace_secs if grace is None else grace
        writer.call(
            lambda db: db.add_event(
                session.id,
                "stop",
                f"stop requested: SIGTERM to process group {pgid}, grace {grace:g}s",
            )
        )
        # Back-pressure holds until the signal goes: released before the two calls above, a
        # flood ran free once a busy store kept them waiting past the release's own wait
        # (SIGNAL_WAIT_SECS), and the stop then waited for all it had printed to be stored.
        throttle.release(before_signal=True)  # a paused group must take its signals
        return procs.terminate_group(pgid, grace) or "SIGTERM"

    def _finish(
        self,
        session: Session,
        returncode: int,
        stop_how: str,
        writer: Writer,
        failure: str | None = None,
        ended_by: str = "",
    ) -> int:
        code = returncode if returncode >= 0 else None
        sig = -returncode if returncode < 0 else None
        if stop_how:
            from ecc.observability.budgets import stop_reason

            state, why = State.STOPPED, None
            with contextlib.suppress(Exception):  # a failing store: the plain reason
                why = writer.call(lambda db: stop_reason(db, session.id), window=0.0)
            reason = (f"stopped: {why}" if why else "stopped on request") + (
                " (SIGKILL after grace)" if stop_how == "SIGKILL" else ""
            )
        elif ended_by:
            state, reason = State.FAILED, f"harness ended ({ended_by}): output could not be stored"
        elif returncode == 0:
            state, reason = State.COMPLETED, "harness exited with code 0"
        elif sig is not None:
            state, reason = State.FAILED, f"harness killed by {procs.signal_name(sig)}"
        else:
            state, reason = State.FAILED, f"harness exited with code {returncode}"
        if failure is not None:
            # the rest stays in the spool: recovery (the daemon) stores it once the store is back
            if state == State.COMPLETED:
                state = State.FAILED
            if ended_by:
                reason += f": {failure}"
            else:
                reason += f"; output could not be stored: {failure}"
        self.outcome = state.value
        after = self.hooked_after
        if after is not None:
            with contextlib.suppress(Exception):  # an audit never changes the outcome
                writer.call(lambda db: audit_enforcement(db, session.id, after))
        if state == State.COMPLETED and self.config.get("worktree", {}).get("auto_commit"):
            from ecc.sessions.publishing import auto_commit  # never changes the outcome

            with contextlib.suppress(Exception):
                writer.call(lambda db: auto_commit(db, session, self.config))
        if state in (State.COMPLETED, State.FAILED) and not ended_by and failure is None:
            ending.run_group_check(session, writer)  # a group's check, before its end is recorded
        self.placement.harness_exited()
        try:
            writer.call(
                lambda db: db.transition(
                    session.id,
                    state,
                    reason,
                    exit_code=code,
                    exit_signal=sig,
                    harness_pid=None,
                )
            )
        except InvalidTransition as exc:  # stopped meanwhile by the CLI: that state stands
            note = f"{reason} (not applied: {exc})"
            with contextlib.suppress(Exception):
                writer.call(lambda db: db.add_event(session.id, "exit", note))
        except Exception as exc:  # the store is gone for good: recovery records the end
            log.error("could not record the end (%s): %s", reason, exc)
            return 1
        ending.advance_group(session, writer, self.config)
        final = writer.call(lambda db: db.get_session(session.id))
        if final is not None and final.parent_id:
            child_results.tell_parent(self.store, session.id)
        if final is not None and final.state in (State.COMPLETED, State.FAILED):
            event = "session_completed" if final.state == State.COMPLETED else "session_failed"
            ending.notify(self.config, event, final, reason)
        return 0 if state == State.COMPLETED else 1

    def _fail(self, reason: str) -> None:
        try:
            current = self.store.get_session(self.session_id)
            if current is None or current.state in TERMINAL:
                return
            self.store.transition(self.session_id, State.FAILED, reason, harness_pid=None)
            failed = self.store.get_session(self.session_id)
            if failed is not None and failed.parent_id:
                child_results.tell_parent(self.store, failed.id)
            if failed is not None:
                ending.notify(self.config, "session_failed", failed, reason)
        except Exception:
            log.exception("could not record the failure")


def supervisor_argv(parent: int, grace: float) -> list[str]:
    """The group leader that ends the session's group when the runner dies (supervisor.py)."""
    script = Path(__file__).with_name("supervisor.py")
    return [sys.executable, "-I", "-S", str(script), str(parent), f"{grace:g}", "--"]


def run_remote_session(session_id: str, *, host: str | None = None) -> str:
    """Run one session on a worker machine of a pool (called by an executor's worker task).

    Claims the session at most once (a redelivery or duplicate is refused and recorded as a
    ``duplicate_refused`` event), heartbeats every second, checks the base commit out of this
    worker's mirror of the session's ``repo_url``, streams everything into the shared store and
    pushes the branch ``ecc/<id>`` back. Returns a short outcome for the engine's logs only;
    the engine's view of the task is never read back as session state. The configuration is
    the validated view, as for :func:`run_session`, so adapters see one config type.
    """
    from ecc.runtime.config import view as fastconfig

    runner = Runner(session_id, fastconfig.view(), PoolPlacement, host=host)
    runner.run()
    ending.export(runner.config, runner.session_id, runner.outcome)
    _drain_spools(runner)
    if runner.outcome == "not started":
        final = None
        with contextlib.suppress(Exception):
            store = open_store(config=runner.config)
            final = store.get_session(session_id)
            store.close()
        runner.outcome = final.state.value if final else "unknown"
    return runner.outcome


def run_session(session_id: str) -> int:
    """Entry point of ``ecc run-session``: returns the runner's exit status.

    The configuration is the cached, validated view (:mod:`ecc.runtime.config.view`; a miss
    validates in full), so a runner starts without importing pydantic while the next
    ``ecc run -d`` may be starting beside it.
    """
    from ecc.runtime import logs
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions.executor import runner_log_path

    logs.for_runner(runner_log_path(session_id))  # rotating, when stderr is that log
    runner = Runner(session_id, fastconfig.view())
    status = runner.run()
    ending.export(runner.config, runner.session_id, runner.outcome)
    return status


def _drain_spools(runner: Runner) -> None:
    """A worker of a pool has no daemon beside it: store what killed runners of this worker
    left in their output spools (the spools of live runners are locked, so left alone)."""
    from ecc.sessions.spool import drain_leftovers

    try:
        with open_store(config=runner.config) as store:
            drain_leftovers(store, runner.config)
    except Exception as exc:
        log.warning("draining left-over output spools failed: %s", exc)


def _beat(store: Any, session_id: str) -> Any:
    """One heartbeat, then the session as the store has it now (on the writer's connection)."""
    store.heartbeat(session_id)
    return store.get_session(session_id)
