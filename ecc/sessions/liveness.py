"""Crash detection on read: a session whose runner died is failed at the next look at it.

Every read of sessions (``ecc sessions``, ``ecc status``, ``ecc logs -f``, ``ecc run``'s follow,
the dashboard, the remote API) and the daemon's recover step call :func:`refresh_liveness`, so
a killed runner never leaves its session ``running`` and the queue behind it stuck until a
daemon comes by. It is cheap: one ``/proc`` read per active session whose runner is on this
host (sessions of other hosts, such as a pool's workers, are judged by their lease instead).

A runner is judged by pid *and* identity token (:mod:`ecc.sessions.procs`), and the row is read
again before anything is written: a runner that recorded its end between the caller's read and
the check is left alone, and the write itself is the store's compare-and-set transition.
"""

from __future__ import annotations

import logging
import os
import signal
import time
from typing import TYPE_CHECKING, Any

from ecc.sessions import procs
from ecc.store.models import ACTIVE, InvalidTransition, State

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ecc.contract.types import Config
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.sessions")

REAP_TRIES = 50  # x 10 ms: how long a dead runner of ours may take to become reapable


def refresh_liveness(
    store: Store, sessions: Iterable[Session] | None = None, config: Config | None = None
) -> list[dict[str, Any]]:
    """Judge the runner of each active local session of this host among ``sessions`` (default:
    every active session) and record the dead ones; then give freed slots to queued sessions.

    Returns what was done, one ``{"id", "action", "reason"?}`` per session changed; callers
    re-read those rows. ``config`` is loaded only when something has to be recorded.
    """
    rows = store.list_sessions(sorted(ACTIVE)) if sessions is None else sessions
    host = procs.hostname()
    dead = [
        (s, _death_signal(s.runner_pid, s.runner_token))  # now, before anyone else reaps it
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
    actions = [action for s, how in dead if (action := record_dead_runner(store, s, config, how))]
    if actions:
        from ecc.sessions.manager import dispatch_queued

        try:
            dispatch_queued(store, config)
        except Exception:
            log.exception("dispatching queued sessions failed")
    return actions


def record_dead_runner(
    store: Store, seen: Session, config: Config, killed_by: int | None = None
) -> dict[str, Any] | None:
    """Record that the runner of ``seen`` (judged dead; ``killed_by`` the signal, if known)
    died, if the store still says so.

    A queued session just loses its claim (a free slot starts it again); a pending one failed
    before its harness started; a running or stale one is failed and whatever its harness left
    is ended. Returns the action, or None when the session had moved on meanwhile.
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
    killed = f" (killed by {procs.signal_name(killed_by)})" if killed_by else ""
    if fresh.state == State.PENDING:
        reason = f"runner process {pid} died before starting the harness{killed}"
    else:
        reason = f"runner process {pid} died without recording an exit{killed}"
        reason += _end_leftovers(fresh)
    try:
        moved = store.transition(
            fresh.id, State.FAILED, reason, expect=[fresh.state], harness_pid=None
        )
    except InvalidTransition:
        return None  # moved on between our read and our write
    if moved is None:
        return None  # someone else recorded it first
    notify_failed(store, fresh.id, reason, config)
    return {"id": fresh.id, "action": "failed", "reason": reason}


def _death_signal(pid: int | None, token: str | None) -> int | None:
    """The signal that killed ``pid`` when it is this process's own unreaped child (the runner
    of an ``ecc run``, or of the server or dashboard that started it); else None (unknown)."""
    if not pid or token is None or procs.token(pid) != token:  # reaped already, or reused
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


def _end_leftovers(session: Session) -> str:
    """End what a dead runner's harness left, without waiting; the reason's tail says how."""
    pgid = session.harness_pgid
    if not pgid:
        return ""
    if session.harness_pid == pgid and procs.alive(pgid, session.harness_token):
        # Its supervisor leads the group still (the runner's death signal reached it too): it
        # forwards one SIGTERM and sends SIGKILL after its own grace.
        procs.ask_group_to_end(pgid)
        return f"; its supervisor is ending harness process group {pgid}"
    if procs.group_alive(pgid):
        procs.signal_group(pgid, signal.SIGKILL)  # nobody is left to escalate
        return f"; its harness process group {pgid} ended by SIGKILL"
    return ""


def notify_failed(store: Store, session_id: str, reason: str, config: Config) -> None:
    """The ``session_failed`` notification for a failure recorded by anyone but the runner."""
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
