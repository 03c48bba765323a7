"""``ecc daemon``: the background caretaker of the session store.

Each pass runs these steps, each isolated (an error is logged and the pass goes on):

1. **recover** — first the lease reaper (:func:`reap_expired`: sessions on a remote executor
   whose heartbeat is older than ``lease_seconds`` are failed, never re-run); then the liveness
   check every read also runs (:func:`ecc.sessions.liveness.refresh_liveness`: a dead runner of
   this host, judged by pid plus process identity, means failed with the reason, and what its
   harness left is ended); then every active local session's heartbeat age: overdue means
   stale, or failed and terminated when ``auto_terminate_stale_sessions``; a fresh heartbeat
   brings stale back to running. Nothing is re-run implicitly, except a pending session no
   runner ever claimed.
2. **schedules** — start each due schedule once (:mod:`ecc.sessions.schedules`): runs missed
   while no daemon ran collapse into one; a failing schedule records its error, the others run.
3. **conflicts** — ``[conflict_resolution]`` (:mod:`ecc.sessions.conflicts`): resume a paused
   session whose partner is done, then find active sessions that changed the same file, record
   each incident once, tell (event, notification) and pause one session as the strategy says.
4. **dispatch** — give free slots to queued sessions (runners also do this when they finish).
5. **budgets** — budget alerts and the limit action for every active session.
6. **prune** — only when ``prune_worktrees`` is on: finished sessions older than
   ``worktree_retention_secs`` lose a clean worktree; a branch goes only when merged.
6. **exports** — only when an exporter plugin is installed: finished sessions not yet delivered
   to an exporter are offered again (:mod:`ecc.observability.exports`; an exporter that
   delivered nothing is tried again after a growing wait).

SIGTERM/SIGINT stop the loop between steps. A lock keeps a second daemon off the same store.
While it runs (not ``--once``), a thread serves the memory vault's tree watcher
(``ecc.runtime.treewatch``), so a warm search of an unchanged vault skips its walk.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.sessions import procs
from ecc.sessions.executor import get_executor
from ecc.sessions.liveness import refresh_liveness, tell_of_failure
from ecc.sessions.spool import drain_leftovers
from ecc.store.base import Store
from ecc.store.models import TERMINAL, State, age_seconds

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.observability.exports import Backoff

log = logging.getLogger("ecc.daemon")

UNCLAIMED_GRACE_SECS = 10.0  # a pending session no runner has claimed for this long is re-submitted


def reap_expired(store: Store, config: Config) -> list[dict[str, Any]]:
    """The lease reaper: fail every claimed session of a remote executor (any but ``local``)
    whose heartbeat is older than ``lease_seconds``, with the reason. Never re-runs anything.

    Pure store logic (no plugin, no engine): the daemon runs it on every pass, and CLI reads
    (``sessions``, ``status``, ``logs -f``, ``run``) run it too, so a pool without a daemon
    still notices a dead worker. Heartbeats are the workers' clocks: keep hosts in NTP sync.
    """
    actions: list[dict[str, Any]] = []
    lease = float(config.lease_seconds)
    for session in store.list_sessions([State.PENDING, State.QUEUED, State.RUNNING, State.STALE]):
        if session.executor == "local":
            continue
        if session.state in (State.PENDING, State.QUEUED) and session.runner_pid is None:
            continue  # not claimed yet: still waiting in the engine's queue
        age = age_seconds(session.heartbeat_at or session.updated_at)
        if age is None or age <= lease:
            continue
        where = session.runner_host or "its worker"
        reason = (
            f"lease expired: no heartbeat from {where} for {age:.1f}s "
            f"(lease_seconds={lease:g}); the session is not re-run"
        )
        if store.fail_if_silent(session.id, session.heartbeat_at, reason):
            actions.append({"id": session.id, "action": "failed", "reason": reason})
            tell_of_failure(store, session.id, reason, config)
    return actions


def reap_quietly(store: Store, config: Config | None = None) -> None:
    """For CLI reads: the liveness check of this host's runners, then :func:`reap_expired`;
    neither may break a read."""
    try:
        refresh_liveness(store, None, config)
    except Exception as exc:
        log.debug("liveness check skipped: %s", exc)
    try:
        if config is None:
            from ecc.runtime.config import view as fastconfig

            config = fastconfig.view()
        reap_expired(store, config)
    except Exception as exc:
        log.debug("lease reaper skipped: %s", exc)


def recover(store: Store, config: Config) -> list[dict[str, Any]]:
    """Mark sessions whose runner died or went silent; returns what was done."""
    actions: list[dict[str, Any]] = reap_expired(store, config)
    # this host's dead runners, as reads do; unlike a read, wait for their harnesses to end
    actions += refresh_liveness(store, None, config, wait=float(config.stop_grace_secs) + 1.0)
    timeout = float(config.session_timeout_secs)
    for session in store.list_sessions([State.PENDING, State.QUEUED, State.RUNNING, State.STALE]):
        if session.executor != "local":
            continue  # judged by the lease alone (reap_expired); its engine owns the queue
        executor = get_executor(session.executor, config)
        local = executor.is_local(session)
        if (
            local
            and session.runner_pid
            and not procs.alive(session.runner_pid, session.runner_token)
        ):
            continue  # refresh_liveness records it (once its harness has ended)
        if session.state in (State.PENDING, State.QUEUED):
            if (
                session.state == State.PENDING
                and session.runner_pid is None
                and not session.stop_requested
                and (age_seconds(session.updated_at) or 0.0) > UNCLAIMED_GRACE_SECS
            ):
                executor.submit(session)  # a duplicate runner is refused by the claim
                store.add_event(session.id, "daemon", "re-submitted: no runner had claimed it")
                actions.append({"id": session.id, "action": "resubmitted"})
            continue
        beat_age = age_seconds(session.heartbeat_at or session.updated_at) or 0.0
        if beat_age > timeout:
            overdue = f"no heartbeat for {beat_age:.0f}s (session_timeout_secs={timeout:g})"
            if config.auto_terminate_stale_sessions:
                if local and session.harness_pgid:
                    procs.terminate_group(session.harness_pgid, config.stop_grace_secs)
                    executor.interrupt(session)
                reason = overdue + "; terminated (auto_terminate_stale_sessions)"
                store.transition(session.id, State.FAILED, reason, harness_pid=None)
                actions.append({"id": session.id, "action": "failed", "reason": reason})
                tell_of_failure(store, session.id, reason, config)
            elif session.state == State.RUNNING:
                store.transition(session.id, State.STALE, overdue)
                actions.append({"id": session.id, "action": "stale", "reason": overdue})
        elif session.state == State.STALE:
            store.transition(session.id, State.RUNNING, "heartbeat resumed")
            actions.append({"id": session.id, "action": "running again"})
    actions += drain_leftovers(store, config)  # the output spools dead runners left unstored
    return actions


def dispatch(store: Store, config: Config) -> list[str]:
    """Queued sessions and follow-ups, then the next steps of sequences (ecc.sessions.groups)."""
    from ecc.sessions import groups
    from ecc.sessions.manager import dispatch_queued

    return dispatch_queued(store, config) + groups.advance(store, config)


def prune(store: Store, config: Config, *, force_all: bool = False) -> list[dict[str, Any]]:
    """Remove finished sessions' worktrees past retention (clean ones only; merged branches)."""
    from ecc.sessions import worktrees

    results = []
    for session in store.list_sessions(sorted(TERMINAL)):
        if not session.worktree_path or not session.worktree_branch:
            continue
        age = age_seconds(session.ended_at or session.updated_at) or 0.0
        if not force_all and age < config.worktree_retention_secs:
            continue
        path = Path(session.worktree_path)
        repo = Path(session.repo_root or session.project_dir)
        if not path.is_dir() and not worktrees.branch_exists(repo, session.worktree_branch):
            continue
        outcome = worktrees.remove(
            repo, path, session.worktree_branch, session.base_branch or session.base_commit
        )
        if outcome.worktree_removed:
            kept = f"; kept: {outcome.kept_reason}" if outcome.kept_reason else ""
            store.add_event(session.id, "worktree", "worktree pruned" + kept)
        results.append({"id": session.id, **outcome.as_dict()})
    return results


def _budgets(store: Store, config: Config) -> list[dict[str, Any]]:
    """Budget alerts and the limit action for every active session (ecc.observability.budgets)."""
    from ecc.observability import budgets

    return budgets.check(store, config)


def _schedules(store: Store) -> list[dict[str, Any]]:
    """Start the due schedules (ecc.sessions.schedules), each once, an error recorded on it."""
    from ecc.sessions import schedules

    return schedules.run_due(store)


def _conflicts(store: Store, config: Config) -> list[dict[str, Any]]:
    """Conflicts between sessions: resume, detect, act (ecc.sessions.conflicts)."""
    from ecc.sessions import conflicts

    return conflicts.check(store, config)


def _start_tree_watcher() -> Any:
    """The memory vault's tree watcher on a thread (a warm search then skips the walk of an
    unchanged vault: ecc.runtime.treewatch), or None where it cannot run."""
    from ecc.runtime import paths, treewatch

    try:
        return treewatch.start(paths.cache_dir())
    except Exception:
        log.exception("memory tree watcher not started")
        return None


class Daemon:
    def __init__(self, store: Store, config: Config, interval: float) -> None:
        self.store = store
        self.config = config
        self.interval = interval
        self.stopping = threading.Event()
        self.export_backoff: Backoff | None = None  # kept across passes

    def _exports(self) -> list[dict[str, Any]]:
        from ecc.observability import exports

        if self.export_backoff is None:
            self.export_backoff = exports.Backoff()
        return exports.daemon_step(self.store, self.config, self.export_backoff)

    def steps(self) -> list[tuple[str, Any]]:
        steps: list[tuple[str, Any]] = [
            ("recover", lambda: recover(self.store, self.config)),
            ("schedules", lambda: _schedules(self.store)),
            ("conflicts", lambda: _conflicts(self.store, self.config)),
            ("dispatch", lambda: dispatch(self.store, self.config)),
            ("budgets", lambda: _budgets(self.store, self.config)),
        ]
        if self.config.prune_worktrees:
            steps.append(("prune", lambda: prune(self.store, self.config)))
        steps.append(("exports", self._exports))
        return steps

    def run_pass(self) -> dict[str, Any]:
        report: dict[str, Any] = {}
        for name, step in self.steps():
            if self.stopping.is_set():
                break
            try:
                result = step()
                report[name] = result
                if result:
                    log.info("%s: %s", name, result)
            except Exception as exc:  # one failing step must not stop the others
                log.exception("step %s failed", name)
                report[name] = {"error": f"{type(exc).__name__}: {exc}"}
        return report

    def serve(self, once: bool = False) -> dict[str, Any]:
        lock = self.store.daemon_lock()
        lock.acquire()
        previous = {
            sig: signal.signal(sig, lambda *_: self.stopping.set())
            for sig in (signal.SIGTERM, signal.SIGINT)
        }
        watcher = None if once else _start_tree_watcher()
        try:
            log.info("daemon started (pid lock %s, interval %gs)", lock.path, self.interval)
            report = self.run_pass()
            while not once and not self.stopping.is_set():
                self.stopping.wait(self.interval)
                if self.stopping.is_set():
                    break
                started = time.monotonic()
                report = self.run_pass()
                log.debug("pass took %.3fs", time.monotonic() - started)
            log.info("daemon stopped")
            return report
        finally:
            if watcher is not None:
                watcher.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            lock.release()
