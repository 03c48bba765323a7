"""Where a claimed session runs: on this machine, or on a worker of a pool. Chosen once per run.

The runner (:mod:`ecc.sessions.runner`) does the same for both — claim, build the command,
supervise the harness, record the end — and asks its placement for what differs:

* :class:`LocalPlacement` (``ecc run-session``, the ``local`` executor): waits for one of the
  parallel slots (or leaves the session queued), runs in the project directory or in a git
  worktree of the project, and hands free slots to queued sessions when it ends;
* :class:`PoolPlacement` (:func:`ecc.sessions.runner.run_remote_session`, a worker of a pool):
  no slot accounting (the worker's concurrency is the limit), a heartbeat every second from the
  claim on (the lease), the worktree from this worker's own mirror of ``repo_url`` at the exact
  base commit, and the branch pushed back to the remote at the end.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.sessions import procs
from ecc.store.models import State

if TYPE_CHECKING:
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.runner")

POOL_BEAT_SECS = 1.0  # the lease heartbeat of a worker-pool session


class Placement:
    """The part of a session run that depends on where it runs."""

    refusal_kind = "runner_refused"  # the event a refused claim records

    def __init__(self, store: Store, config: Any, session_id: str, pid: int, host: str) -> None:
        self.store = store
        self.config = config
        self.session_id = session_id
        self.pid = pid
        self.host = host

    def refused_by(self) -> str:
        """Who was refused, in the refusal event."""
        return f"runner {self.pid}"

    def claimed(self) -> None:
        """Called once the session is claimed for this run."""

    def admit(self, session: Session) -> bool:
        """Whether the claimed session may start now (False: it waits, or was stopped)."""
        return True

    def beat_interval(self) -> float:
        """Seconds between the runner's heartbeats (and its looks at the stop flag)."""
        return float(self.config.heartbeat_interval_secs)

    def prepare(self, session: Session) -> Path:
        """The directory the harness runs in, ready (recorded in the store)."""
        raise NotImplementedError

    def harness_exited(self) -> None:
        """Called when the harness has exited, before the session's final state is recorded
        (whoever waits for that state finds the run's results in place); never raises."""

    def end(self) -> None:
        """Called when the run ends, whatever happened after the claim; never raises."""


class LocalPlacement(Placement):
    """A runner process on this machine, sharing its slots with the other local sessions."""

    def admit(self, session: Session) -> bool:
        """Hold a slot, or leave the session queued for whoever frees one next."""
        store = self.store
        wt, total = self.config.max_parallel_worktrees, self.config.max_parallel_sessions
        while True:
            current = store.get_session(session.id)
            assert current is not None
            if current.stop_requested:
                store.transition(
                    session.id,
                    State.STOPPED,
                    "stopped while waiting",
                    expect=[State.PENDING, State.QUEUED],
                )
                return False
            if current.slot or store.claim_slot(session.id, wt, total):
                return True
            if current.state == State.PENDING:
                in_use = store.slots_in_use()
                store.transition(
                    session.id,
                    State.QUEUED,
                    f"waiting for a slot ({in_use} in use; max_parallel_worktrees={wt}, "
                    f"max_parallel_sessions={total})",
                    expect=[State.PENDING],
                )
                store.enqueue(session.id, current.repo_root)
            store.release_runner(session.id, self.pid)
            # A slot freed before we were visible as unclaimed would wake nobody: look again.
            if not store.slot_free(current.use_worktree, wt, total):
                fresh = store.get_session(session.id)
                if fresh is None or not fresh.slot:
                    return False
            if not store.claim_runner(session.id, self.pid, self.host, procs.token(self.pid)):
                return False

    def prepare(self, session: Session) -> Path:
        """The session's working directory, or its worktree (created, or restored on resume)."""
        if not session.use_worktree:
            working = Path(session.working_dir)
            if not working.is_dir():
                raise EccError(f"working directory {working} does not exist")
            return working
        from ecc.sessions import provision, worktrees

        store = self.store
        repo = Path(session.repo_root or session.project_dir)
        if session.worktree_path:
            path = Path(session.worktree_path)
            if not path.is_dir():
                worktrees.restore(repo, path, session.worktree_branch or "")
                store.add_event(session.id, "worktree", f"worktree restored at {path}")
        else:
            path, branch = worktrees.create(
                repo, session.id, session.base_commit or "HEAD", self.config
            )
            store.update_session(session.id, worktree_path=str(path), worktree_branch=branch)
            store.add_event(session.id, "worktree", f"worktree {path} on branch {branch}")
            provision.new_worktree(store, session, repo, path, self.config)  # [worktree] settings
        rel = Path(session.project_dir).resolve()
        try:
            sub = rel.relative_to(Path(repo).resolve())
        except ValueError:
            sub = Path()
        working = path / sub if (path / sub).is_dir() else path
        store.update_session(session.id, working_dir=str(working))
        return working

    def end(self) -> None:
        """Our slot may be free now: start the next queued sessions, and a sequence's next
        step (error-isolated)."""
        try:
            from ecc.sessions import groups
            from ecc.sessions.manager import dispatch_queued

            dispatch_queued(self.store, self.config)
            groups.advance(self.store, self.config)
        except Exception:
            log.exception("dispatching queued sessions failed")


class PoolPlacement(Placement):
    """A worker of a pool: judged by its lease, working from its own mirror of the remote."""

    refusal_kind = "duplicate_refused"

    def __init__(self, store: Store, config: Any, session_id: str, pid: int, host: str) -> None:
        super().__init__(store, config, session_id, pid, host)
        self.beating = threading.Event()
        self.lease: threading.Thread | None = None

    def refused_by(self) -> str:
        return f"delivery to {self.host}"

    def claimed(self) -> None:
        self.lease = threading.Thread(target=self._beat, name="ecc-lease", daemon=True)
        self.beating.set()
        self.lease.start()

    def beat_interval(self) -> float:
        return min(float(self.config.heartbeat_interval_secs), POOL_BEAT_SECS)

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
                for _ in range(int(POOL_BEAT_SECS / 0.05)):
                    if not self.beating.is_set():
                        break
                    time.sleep(0.05)
        finally:
            store.close()

    def prepare(self, session: Session) -> Path:
        """A worktree from this worker's mirror at the exact base commit (or the session's
        pushed branch, on resume), else an empty scratch directory."""
        from ecc.runtime import paths
        from ecc.sessions import mirrors

        store = self.store
        if not session.use_worktree or not session.repo_url:
            scratch = paths.ensure_private_dir(paths.data_dir() / "scratch" / session.id)
            store.update_session(session.id, working_dir=str(scratch))
            return scratch
        path, branch = mirrors.checkout_from_mirror(
            session.repo_url, session.id, session.base_commit or "HEAD", self.config
        )
        store.update_session(
            session.id, worktree_path=str(path), worktree_branch=branch, working_dir=str(path)
        )
        store.add_event(
            session.id,
            "worktree",
            f"worktree {path} on branch {branch} at {(session.base_commit or '')[:12]} "
            f"(worker {self.host})",
        )
        return path

    def harness_exited(self) -> None:
        """Publish the branch while the lease still beats: ``ecc run`` returns on the final
        state, and the branch must be on the remote (and the worktree gone) by then."""
        self._publish()

    def end(self) -> None:
        """Stop the lease, then publish the session's branch if the run ended before its
        harness did (a runner error); once published, the worktree is gone and this is a no-op."""
        if self.lease is not None:
            self.beating.clear()
            self.lease.join()
        self._publish()

    def _publish(self) -> None:
        """Commit what the agent left uncommitted and push ``ecc/<id>`` to the repository's
        remote, so the result is reviewable from anywhere; then drop the local worktree (the
        branch lives on the remote)."""
        from ecc.sessions import mirrors

        try:
            session = self.store.get_session(self.session_id)
            if session is None or not session.repo_url or not session.worktree_path:
                return
            path = Path(session.worktree_path)
            if not path.is_dir():
                return
            result = mirrors.publish(path, session.repo_url, session.worktree_branch or "")
            self.store.add_event(session.id, "pushed", result)
            mirrors.drop_checkout(path, session.worktree_branch or "")
        except Exception as exc:
            log.exception("publishing the session branch failed")
            with contextlib.suppress(Exception):
                self.store.add_event(self.session_id, "push_failed", f"push failed: {exc}")
