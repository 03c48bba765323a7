"""The runner: one detached process per session run (``ecc run-session --session-id ID``).

It reads the session from the store, claims it at most once, waits for a slot (or leaves the
session queued), prepares the worktree, builds the harness command through the adapter hooks,
starts the harness in its own process group with stdin on /dev/null, and records everything
through the store: output lines (one writer thread, batched), heartbeats, tool calls and usage
parsed by the adapter, the exit code or signal, and the final state. A stop request (the store
flag, or SIGTERM to the runner) ends the harness's whole process group: SIGTERM, grace, SIGKILL.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions import procs
from ecc.store.base import Store
from ecc.store.models import TERMINAL, InvalidTransition, Session, State, iso_from_epoch
from ecc.store.open import open_store

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecc.runtime.config.model import Config

log = logging.getLogger("ecc.runner")

MAX_LINE_BYTES = 64 * 1024
READ_CHUNK = 256 * 1024
BATCH_LINES = 5000
LEFTOVER_WAIT_SECS = 2.0
REMOTE_BEAT_SECS = 1.0  # the lease heartbeat of a worker-pool session


# -- capture ------------------------------------------------------------------------------


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
    """The one ``ecc_parse_output_line`` implementation that owns ``harness``, or None.

    The hook's contract says an implementation returns None exactly when the harness is not its
    own, so ownership is settled on the first line and later lines skip the hook machinery
    (a full pluggy call per line would cap capture throughput).
    """
    for impl in hook.get_hookimpls():
        names = set(impl.argnames)  # an implementation may take fewer arguments than the spec

        def call(impl: Any = impl, names: set[str] = names, **kwargs: Any) -> Any:
            return impl.function(**{k: v for k, v in kwargs.items() if k in names})

        try:
            if call(harness=harness, line=line, stream=stream) is not None:
                return call
        except Exception as exc:
            log.warning("output parser %s failed: %s", impl.plugin_name, exc)
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


# -- the run ------------------------------------------------------------------------------


class Runner:
    """Runs one session. ``remote=True`` is a worker of a pool (``run_remote_session``): no
    slot accounting (the worker's concurrency is the limit), a heartbeat every second from the
    claim on (the lease), the worktree from the worker's own mirror of ``repo_url`` at the exact
    base commit, and the branch pushed back to the remote at the end."""

    def __init__(
        self, session_id: str, config: Config, *, remote: bool = False, host: str | None = None
    ) -> None:
        self.session_id = session_id
        self.config = config
        self.remote = remote
        self.host = host or procs.hostname()
        self.store = open_store(config=config)
        self.wake = threading.Event()
        self.stop_signal = threading.Event()
        self.pid = os.getpid()
        self.outcome = "not started"
        self.beating = threading.Event()

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
        kind = "duplicate_refused" if self.remote else "runner_refused"
        where = f"delivery to {self.host}" if self.remote else f"runner {self.pid}"
        self.store.add_event(
            session.id,
            kind,
            f"{where} refused: {why}",
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
        beat = None
        if self.remote:
            beat = threading.Thread(target=self._beat, name="ecc-lease", daemon=True)
            self.beating.set()
            beat.start()
        try:
            if not self.remote and not self._acquire_slot(session):
                return 0
            return self._run_claimed()
        except Exception as exc:
            log.exception("runner failed")
            self._fail(f"runner error: {exc}")
            return 1
        finally:
            if beat is not None:
                self.beating.clear()
                beat.join()
            if self.remote:
                self._publish()
                with contextlib.suppress(Exception):
                    self.store.close()
            else:
                self._dispatch_next()

    def _beat_interval(self) -> float:
        interval = self.config.heartbeat_interval_secs
        return min(interval, REMOTE_BEAT_SECS) if self.remote else interval

    def _beat(self) -> None:
        """The lease: one heartbeat a second from the claim to the end, on its own connection
        (preparing a worktree from a mirror may take longer than the lease)."""
        store = self.store.reopen()
        try:
            while self.beating.is_set():
                try:
                    store.heartbeat(self.session_id)
                except Exception as exc:
                    log.warning("heartbeat failed: %s", exc)
                for _ in range(int(REMOTE_BEAT_SECS / 0.05)):
                    if not self.beating.is_set():
                        break
                    time.sleep(0.05)
        finally:
            store.close()

    def _limits(self) -> tuple[int, int]:
        return self.config.max_parallel_worktrees, self.config.max_parallel_sessions

    def _acquire_slot(self, session: Session) -> bool:
        """Hold a slot, or leave the session queued for whoever frees one next."""
        wt, total = self._limits()
        while True:
            current = self.store.get_session(session.id)
            assert current is not None
            if current.stop_requested:
                self.store.transition(
                    session.id,
                    State.STOPPED,
                    "stopped while waiting",
                    expect=[State.PENDING, State.QUEUED],
                )
                return False
            if current.slot or self.store.claim_slot(session.id, wt, total):
                return True
            if current.state == State.PENDING:
                in_use = self.store.slots_in_use()
                self.store.transition(
                    session.id,
                    State.QUEUED,
                    f"waiting for a slot ({in_use} in use; max_parallel_worktrees={wt}, "
                    f"max_parallel_sessions={total})",
                    expect=[State.PENDING],
                )
                self.store.enqueue(session.id, current.repo_root)
            self.store.release_runner(session.id, self.pid)
            # A slot freed before we were visible as unclaimed would wake nobody: look again.
            if not self.store.slot_free(current.use_worktree, wt, total):
                fresh = self.store.get_session(session.id)
                if fresh is None or not fresh.slot:
                    return False
            if not self.store.claim_runner(
                session.id, self.pid, procs.hostname(), procs.token(self.pid)
            ):
                return False

    def _prepare_remote_dir(self, session: Session) -> Path:
        """A worker's directory: a worktree from its own mirror at the exact base commit (or
        the session's pushed branch, on resume), else an empty scratch directory."""
        from ecc.runtime import paths
        from ecc.sessions import worktrees

        if not session.use_worktree or not session.repo_url:
            scratch = paths.ensure_private_dir(paths.data_dir() / "scratch" / session.id)
            self.store.update_session(session.id, working_dir=str(scratch))
            return scratch
        path, branch = worktrees.checkout_from_mirror(
            session.repo_url, session.id, session.base_commit or "HEAD", self.config
        )
        self.store.update_session(
            session.id, worktree_path=str(path), worktree_branch=branch, working_dir=str(path)
        )
        self.store.add_event(
            session.id,
            "worktree",
            f"worktree {path} on branch {branch} at {(session.base_commit or '')[:12]} "
            f"(worker {self.host})",
        )
        return path

    def _publish(self) -> None:
        """Remote mode: commit what the agent left uncommitted and push ``ecc/<id>`` to the
        repository's remote, so the result is reviewable from anywhere; then drop the local
        worktree (the branch lives on the remote)."""
        from ecc.sessions import worktrees

        try:
            session = self.store.get_session(self.session_id)
            if session is None or not session.repo_url or not session.worktree_path:
                return
            path = Path(session.worktree_path)
            if not path.is_dir() or session.state not in TERMINAL:
                return
            result = worktrees.publish(path, session.repo_url, session.worktree_branch or "")
            self.store.add_event(session.id, "pushed", result)
            worktrees.drop_checkout(path, session.worktree_branch or "")
        except Exception as exc:
            log.exception("publishing the session branch failed")
            with contextlib.suppress(Exception):
                self.store.add_event(self.session_id, "push_failed", f"push failed: {exc}")

    def _prepare_dir(self, session: Session) -> Path:
        if self.remote:
            return self._prepare_remote_dir(session)
        if not session.use_worktree:
            working = Path(session.working_dir)
            if not working.is_dir():
                raise EccError(f"working directory {working} does not exist")
            return working
        from ecc.sessions import worktrees

        repo = Path(session.repo_root or session.project_dir)
        if session.worktree_path:
            path = Path(session.worktree_path)
            if not path.is_dir():
                worktrees.restore(repo, path, session.worktree_branch or "")
                self.store.add_event(session.id, "worktree", f"worktree restored at {path}")
        else:
            path, branch = worktrees.create(
                repo, session.id, session.base_commit or "HEAD", self.config
            )
            self.store.update_session(session.id, worktree_path=str(path), worktree_branch=branch)
            self.store.add_event(session.id, "worktree", f"worktree {path} on branch {branch}")
        rel = Path(session.project_dir).resolve()
        try:
            sub = rel.relative_to(Path(repo).resolve())
        except ValueError:
            sub = Path()
        working = path / sub if (path / sub).is_dir() else path
        self.store.update_session(session.id, working_dir=str(working))
        return working

    def _build(self, session: Session, working: Path) -> tuple[list[str], dict[str, str]]:
        from ecc.contract.types import LaunchContext
        from ecc.runtime.plugins.loader import get_plugins

        hook = get_plugins(self.config).harness_hook(session.harness)
        profile = None
        if session.profile:  # the typed profile adapters expect (pydantic only for these)
            from ecc.runtime.config.model import AgentProfile

            profile = AgentProfile(**session.profile)
        launch = LaunchContext(
            session_id=session.id,
            task=session.task,
            working_dir=working,
            project_dir=Path(session.repo_root or session.project_dir),
            config=self.config,
            profile=profile,
            session_name=session.name or "",
        )
        if profile is not None:
            translation = hook.ecc_translate_profile(
                harness=session.harness, profile=profile, launch=launch
            )
            if translation is not None and translation.refused:
                refused = "; ".join(f"{k}: {v}" for k, v in translation.refused.items())
                raise EccError(f"harness {session.harness} refused profile fields ({refused})")
            if translation is None:
                self.store.add_event(
                    session.id, "profile", f"harness {session.harness} does not map agent profiles"
                )
        argv = None
        if session.run_kind == "resume":
            argv = hook.ecc_resume_command(
                harness=session.harness,
                launch=launch,
                harness_session_id=session.harness_session_id,
            )
        if argv is None:
            argv = hook.ecc_build_command(harness=session.harness, launch=launch)
        if not argv:
            raise EccError(f"no installed adapter builds a command for harness {session.harness!r}")
        env = dict(os.environ)
        env.update(
            ECC_SESSION_ID=session.id,
            ECC_HARNESS=session.harness,
            ECC_WORKING_DIR=str(working),
            ECC_PROJECT_DIR=str(launch.project_dir),
        )
        for extra in hook.ecc_session_env(harness=session.harness, launch=launch):
            if extra:
                env.update({str(k): str(v) for k, v in extra.items()})
        return [str(part) for part in argv], env

    def _parser(self) -> Callable[..., Any] | None:
        from ecc.runtime.plugins.loader import get_plugins

        session = self.store.get_session(self.session_id)
        harness = session.harness if session is not None else ""
        hook = get_plugins(self.config).harness_hook(harness).ecc_parse_output_line
        return hook if hook.get_hookimpls() else None

    def _run_claimed(self) -> int:
        session = self.store.get_session(self.session_id)
        assert session is not None
        working = self._prepare_dir(session)
        fresh = self.store.get_session(self.session_id)
        waiting = (State.PENDING, State.QUEUED)
        if fresh is not None and fresh.stop_requested and fresh.state in waiting:
            self.store.transition(
                session.id, State.STOPPED, "stopped before it started", expect=[fresh.state]
            )
            return 0
        argv, env = self._build(session, working)
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
        writer = Writer(self.store.reopen, session, self._parser(), self.store.max_seq(session.id))
        writer.start()
        grace = self.config.stop_grace_secs
        try:
            proc = subprocess.Popen(
                [*supervisor_argv(self.pid, grace), *argv],
                cwd=working,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                process_group=0,
                close_fds=True,
            )
        except OSError as exc:
            writer.close()
            self._fail(f"cannot start {argv[0]}: {exc.strerror or exc}")
            return 1
        try:
            return self._supervise(session, proc, writer)
        finally:
            writer.close()

    def _supervise(self, session: Session, proc: subprocess.Popen[bytes], writer: Writer) -> int:
        pgid = proc.pid
        token = procs.token(proc.pid)
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
            procs.terminate_group(pgid, 0)
            return 1
        self._notify("session_started", session, f"started: {session.task[:80]}")
        reader = Reader({"stdout": proc.stdout, "stderr": proc.stderr}, writer.inbox)
        reader.start()
        waiter = threading.Thread(target=self._wait_exit, args=(proc,), daemon=True)
        waiter.start()
        interval = self._beat_interval()
        next_beat = time.monotonic() + interval
        stop_how = ""
        while proc.poll() is None:
            self.wake.wait(timeout=max(0.0, next_beat - time.monotonic()))
            self.wake.clear()
            if proc.poll() is not None:
                break
            requested = self.stop_signal.is_set()
            if time.monotonic() >= next_beat:
                next_beat = time.monotonic() + interval
                fresh = writer.call(
                    lambda db: (db.heartbeat(session.id), db.get_session(session.id))[1]
                )
                requested = requested or bool(fresh and fresh.stop_requested)
                if fresh is not None and fresh.state in TERMINAL:
                    # failed by the lease reaper (we were silent too long): never keep running
                    note = f"session is {fresh.state.value}; ending its process group"
                    writer.call(lambda db, note=note: db.add_event(session.id, "lease", note))
                    requested = True
            if requested:
                stop_how = self._stop(session, pgid, writer)
                break
        returncode = proc.wait()
        # Leftover children holding the pipes open must not keep the session alive forever.
        reader.join(timeout=LEFTOVER_WAIT_SECS if not stop_how else 5.0)
        if reader.is_alive():
            how = procs.terminate_group(pgid, self.config.stop_grace_secs)
            writer.call(
                lambda db: db.add_event(
                    session.id, "cleanup", f"left-over harness processes ended by {how}"
                )
            )
            reader.join(timeout=5.0)
            reader.abandon.set()
            reader.join()
        elif procs.group_alive(pgid):
            procs.terminate_group(pgid, self.config.stop_grace_secs)
        writer.output_done.wait(timeout=30)
        if reader.truncated:
            writer.call(
                lambda db: db.add_event(
                    session.id, "output", f"{reader.truncated} over-long line(s) truncated"
                )
            )
        return self._finish(session, returncode, stop_how, writer)

    def _wait_exit(self, proc: subprocess.Popen[bytes]) -> None:
        proc.wait()
        self.wake.set()

    def _stop(self, session: Session, pgid: int, writer: Writer) -> str:
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
        return procs.terminate_group(pgid, grace) or "SIGTERM"

    def _finish(self, session: Session, returncode: int, stop_how: str, writer: Writer) -> int:
        code = returncode if returncode >= 0 else None
        sig = -returncode if returncode < 0 else None
        if stop_how:
            state = State.STOPPED
            reason = "stopped on request" + (
                " (SIGKILL after grace)" if stop_how == "SIGKILL" else ""
            )
        elif returncode == 0:
            state, reason = State.COMPLETED, "harness exited with code 0"
        elif sig is not None:
            state, reason = State.FAILED, f"harness killed by {procs.signal_name(sig)}"
        else:
            state, reason = State.FAILED, f"harness exited with code {returncode}"
        if writer.failure is not None:
            reason += f"; some output could not be stored: {writer.failure}"
        self.outcome = state.value
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
            writer.call(lambda db: db.add_event(session.id, "exit", note))
        final = writer.call(lambda db: db.get_session(session.id))
        if final is not None and final.state in (State.COMPLETED, State.FAILED):
            event = "session_completed" if final.state == State.COMPLETED else "session_failed"
            self._notify(event, final, reason)
        return 0 if state == State.COMPLETED else 1

    def _fail(self, reason: str) -> None:
        try:
            current = self.store.get_session(self.session_id)
            if current is None or current.state in TERMINAL:
                return
            self.store.transition(self.session_id, State.FAILED, reason, harness_pid=None)
            failed = self.store.get_session(self.session_id)
            if failed is not None:
                self._notify("session_failed", failed, reason)
        except Exception:
            log.exception("could not record the failure")

    def _notify(self, event: str, session: Session, body: str) -> None:
        """Tell the notifiers; a notifier problem must never hurt the session."""
        try:
            from ecc.contract.types import Notification
            from ecc.observability.notify import send

            title = f"ecc session {session.id} {event.removeprefix('session_')}"
            data = {
                "harness": session.harness,
                "state": session.state.value,
                "exit_code": session.exit_code,
            }
            send(
                Notification(event=event, title=title, body=body, session_id=session.id, data=data),
                self.config,
            )
        except Exception as exc:
            log.warning("notification %s failed: %s", event, exc)

    def _dispatch_next(self) -> None:
        """Our slot may be free now: start the next queued sessions (error-isolated)."""
        try:
            from ecc.sessions.manager import dispatch_queued

            dispatch_queued(self.store, self.config)
        except Exception:
            log.exception("dispatching queued sessions failed")
        finally:
            with contextlib.suppress(Exception):
                self.store.close()


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
    the engine's view of the task is never read back as session state.
    """
    from ecc.runtime.config.model import get_config

    runner = Runner(session_id, get_config(), remote=True, host=host)
    runner.run()
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

    The configuration is the cached, validated view (:mod:`ecc.runtime.config.view`; a miss validates
    in full), so a runner starts without importing pydantic while the next ``ecc run -d``
    may be starting beside it.
    """
    from ecc.runtime.config import view as fastconfig

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    return Runner(session_id, fastconfig.view()).run()
