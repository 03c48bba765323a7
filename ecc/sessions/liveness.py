"""Crash detection on read: a session whose runner died is failed at the next look at it.

Every read of sessions (``ecc sessions``, ``ecc status``, ``ecc logs -f``, ``ecc run``'s follow,
the dashboard, the remote API) and the daemon's recover step call :func:`refresh_liveness`, so
a killed runner never leaves its session ``running`` and the queue behind it stuck until a
daemon comes by. It is cheap: one process lookup per active session whose runner is on this
host (sessions of other hosts, such as a pool's workers, are judged by their lease instead).

A runner is judged by pid *and* identity token (:mod:`ecc.sessions.procs`), and the row is read
again before anything is written: a runner that recorded its end between the caller's read and
the check is left alone, and the write itself is the store's compare-and-set transition. The
session is failed once its harness has ended too (its supervisor ends it on the runner's death;
a harness ignoring SIGTERM lasts ``stop_grace_secs``) and the rest of its output spool is stored
(:func:`ecc.sessions.spool.drain_spool`), so nothing it printed after its runner died is lost.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from ecc.sessions import child_results, procs
from ecc.store.models import ACTIVE, InvalidTransition, State, age_seconds

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.sessions")

REAP_TRIES = 50  # x 10 ms: how long a dead runner of ours may take to become reapable
HARNESS_END_SECS = 30.0  # past the stop grace: how long a dead runner's harness may take to end


def refresh_liveness(
    store: Store,
    sessions: Iterable[Session] | None = None,
    config: Config | None = None,
    wait: float = 0.0,
) -> list[dict[str, Any]]:
    """Judge the runner of each active local session of this host among ``sessions`` (default:
    every active session) and record the dead ones; then give freed slots to queued sessions.

    Returns what was done, one ``{"id", "action", "reason"?}`` per session changed; callers
    re-read those rows. ``config`` is loaded only when something has to be recorded. Reads
    never wait for a dead runner's harness to end (a later look records it); the daemon waits
    up to ``wait`` seconds for each.
    """
    rows = store.list_sessions(sorted(ACTIVE)) if sessions is None else sessions
    host = procs.hostname()
    dead = [
        s
        for s in rows
        if s.state in ACTIVE
        and s.executor == "local"
        and s.runner_pid
        and s.runner_host == host
        and not procs.alive(s.runner_pid, s.runner_token)
    ]
    if not dead:
        return []
    if config is None:
        from ecc.runtime.config import view as fastconfig

        config = fastconfig.view()
    actions = [action for s in dead if (action := record_dead_runner(store, s, config, wait))]
    if actions:
        from ecc.sessions import groups
        from ecc.sessions.manager import dispatch_queued

        try:
            dispatch_queued(store, config)
            groups.advance(store, config)  # a sequence whose step's runner died goes on or stops
        except Exception:
            log.exception("dispatching queued sessions failed")
    return actions


def record_dead_runner(
    store: Store, seen: Session, config: Config, wait: float = 0.0
) -> dict[str, Any] | None:
    """Record that the runner of ``seen`` (judged dead) died, if the store still says so.

    A queued session just loses its claim (a free slot starts it again). A pending or running
    one is failed once its harness's process group has ended (asked here, without waiting:
    until then the harness still runs and writes) and what the harness wrote to the output
    spool is stored. Returns the action, or None when the session had moved on meanwhile or
    its harness is still ending (the next look records it).
    """
    fresh = store.get_session(seen.id)
    if (
        fresh is None
        or fresh.state not in ACTIVE
        or fresh.runner_pid != seen.runner_pid
        or fresh.runner_token != seen.runner_token
    ):
        return None  # it ended, or another runner claimed it, after the caller's read
    pid = int(fresh.runner_pid or 0)
    if fresh.state == State.QUEUED:
        if not store.release_runner(fresh.id, pid):
            return None
        return {"id": fresh.id, "action": "released dead queued runner"}
    harness = _end_harness(fresh, config, wait)
    if harness == "ending":
        return None
    if not _drain_spool(store, fresh, config) and harness != "killed":
        return None  # its spool is being stored by another process: the next look records it
    how = _death_signal(pid, fresh.runner_token)
    killed = f" (killed by {procs.signal_name(how)})" if how else ""
    if fresh.state == State.PENDING:
        reason = f"runner process {pid} died before starting the harness{killed}"
    else:
        reason = f"runner process {pid} died without recording an exit{killed}"
        if harness == "killed":
            reason += (
                f"; its harness process group {fresh.harness_pgid} outlived the grace: SIGKILL"
            )
    try:
        moved = store.transition(
            fresh.id, State.FAILED, reason, expect=[fresh.state], harness_pid=None
        )
    except InvalidTransition:
        return None  # moved on between our read and our write
    if moved is None:
        return None  # someone else recorded it first
    tell_of_failure(store, fresh.id, reason, config)
    return {"id": fresh.id, "action": "failed", "reason": reason}


def _end_harness(session: Session, config: Config, wait: float = 0.0) -> str:
    """Ask what a dead runner's harness left to end, and wait up to ``wait`` seconds: "ending"
    while it runs, "gone" once it has ended, "killed" when it was still there long after the
    grace (SIGKILL, and the session is recorded whatever is left).

    Its supervisor, when it still leads the group, got the runner's death signal too: it
    forwards one SIGTERM and sends SIGKILL after its own grace. A group without its
    supervisor, or one still there :data:`HARNESS_END_SECS` after the grace, gets SIGKILL;
    past that the session is recorded whatever is left (a process that survives even SIGKILL
    must not keep its session running for ever)."""
    pgid = session.harness_pgid
    if not pgid or session.state not in (State.RUNNING, State.STALE):
        return "gone"
    supervised = session.harness_pid == pgid and procs.alive(pgid, session.harness_token)
    if not supervised and not procs.group_alive(pgid):
        return "gone"
    silent = age_seconds(session.heartbeat_at or session.updated_at) or 0.0
    overdue = silent > float(config.stop_grace_secs) + HARNESS_END_SECS
    if supervised and not overdue:
        procs.ask_group_to_end(pgid)
    else:
        procs.signal_group(pgid, signal.SIGKILL)
    if overdue:
        return "killed"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if not procs.group_alive(pgid):
            return "gone"
    return "ending"


def _drain_spool(store: Store, session: Session, config: Config) -> bool:
    """Store what the harness wrote to its output spool that the runner had not stored yet.

    False while the spool is held (by another drain); a drain that fails is logged and left
    to the daemon's pass over left-over spools, so the session is still recorded."""
    from ecc.sessions.spool import drain_spool

    try:
        return drain_spool(store, session, config) is not None
    except Exception as exc:
        log.warning("draining the output spool of %s failed: %s", session.id, exc)
        return True


def _death_signal(pid: int, token: str | None) -> int | None:
    """The signal that killed ``pid`` when it is this process's own unreaped child (the runner
    of an ``ecc run``, or of the server or dashboard that started it); else None (unknown)."""
    if not pid or not procs.same_process(pid, token):  # reaped already, or reused
        return None
    for _ in range(REAP_TRIES):
        try:
            got, status = os.waitpid(pid, os.WNOHANG)
        except OSError:  # not our child
            return None
        if got == pid:
            return os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
        # A killed process with threads shows as a zombie before its last thread has gone,
        # and cannot be reaped until then: a few milliseconds.
        time.sleep(0.01)
    return None


def tell_of_failure(store: Store, session_id: str, reason: str, config: Config) -> None:
    """A failure recorded by anyone but the runner (a read, the daemon, the lease reaper): the
    ``session_failed`` notification, and the parent's inbox, as the runner would have told."""
    try:
        from ecc.contract.types import Notification
        from ecc.observability.notify import send

        send(
            Notification(
                event="session_failed",
                title=f"ecc session {session_id} failed",
                body=reason,
                session_id=session_id,
            ),
            config,
        )
    except Exception as exc:
        log.warning("notification failed: %s", exc)
    child_results.tell_parent(store, session_id)
