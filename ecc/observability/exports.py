"""Sending finished sessions to exporter plugins (``ecc.exporters``, hook ``ecc_export_sessions``).

Telemetry is derived from the store after the fact, never produced on a hot path: ``ecc hook``
and the runner's capture only record, as always. A session is offered to every exporter once it
is terminal, with what the store holds about it (:class:`ecc.contract.types.SessionRecord`),
and each exporter's answer (the ids it delivered) is recorded with the session's ``ended_at``
(:mod:`ecc.store.exports`), so what was not delivered is offered again:

* by the runner, once its session's end is recorded: :func:`after_session`, on a thread with a
  deadline, so neither the session nor anyone waiting on it is held up by a slow or absent
  collector (``ecc run`` returns at the recorded end; the slot is already free);
* by the daemon on its passes (:class:`Backoff` spaces the tries of an exporter that delivered
  nothing);
* by ``ecc export`` (and the commands plugins build on it), on demand, ``--since`` a time.

Delivery is at least once; exporters derive every identifier from the records so a repeat is
the same span, not a new one.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.contract.types import Config, SessionRecord
    from ecc.runtime.plugins.calls import Implementation
    from ecc.store.base import Store
    from ecc.store.models import Session

log = logging.getLogger("ecc.observability.exports")

BATCH = 50  # sessions per call of an exporter
AFTER_SESSION_DEADLINE_SECS = 10.0  # how long a runner gives its exporters before it exits
EXCERPT_CHARS = 256  # of a tool call's input, in ``input_excerpt``


def installed() -> bool:
    """Whether any exporter plugin is installed (the start-up cache's entry-point list: cheap)."""
    from ecc.contract.hookspecs import EXPORTERS
    from ecc.runtime.plugins.loader import discover

    return bool(discover().get(EXPORTERS))


def record(store: Store, session: Session, delivered: bool = False) -> SessionRecord:
    """What the store holds about ``session``, as exporters receive it."""
    import json

    from ecc.contract.types import SessionRecord
    from ecc.observability.approvals import excerpt

    calls = store.list_tool_calls(session.id)
    for call in calls:  # what may leave the machine: one line, credentials masked
        call["input_excerpt"] = excerpt(json.loads(call["input_json"]), EXCERPT_CHARS)
    approvals = store.list_approvals(pending=False, session_id=session.id)
    keep = ("id", "tool", "score", "action", "created_at", "decision", "decided_by", "decided_at")
    return SessionRecord(
        session=session.as_dict(),
        events=tuple(store.list_events(session.id)),
        tool_calls=tuple(calls),
        approvals=tuple({key: row.get(key) for key in keep} for row in approvals),
        delivered=delivered,
    )


def _exporters(config: Config, only: str | None) -> list[Implementation]:
    from ecc.contract.errors import EccError
    from ecc.runtime.plugins.calls import implementations
    from ecc.runtime.plugins.loader import get_plugins

    found = implementations(get_plugins(config).hook.ecc_export_sessions)
    if only is None:
        return found
    chosen = [impl for impl in found if impl.name == only]
    if not chosen:
        names = ", ".join(sorted(impl.name for impl in found)) or "none installed"
        raise EccError(f"no exporter {only!r} (exporters: {names})")
    return chosen


def export(
    store: Store,
    config: Config,
    *,
    exporter: str | None = None,
    since: str | None = None,
    again: bool = False,
    ids: list[str] | None = None,
    skip: set[str] | frozenset[str] = frozenset(),
    deadline: float | None = None,
) -> list[dict[str, Any]]:
    """Offer due sessions to each exporter (or the one named; none in ``skip``), in batches,
    until none is due,
    a batch delivers nothing, or ``deadline`` (``time.monotonic()``) passes. Returns one report
    per exporter: ``{"exporter", "offered", "delivered", "error"}``; never raises for a
    plugin's failure (its ``error`` says it)."""
    reports = []
    for impl in _exporters(config, exporter):
        if impl.name in skip:
            continue
        report: dict[str, Any] = {"exporter": impl.name, "offered": 0, "delivered": 0, "error": ""}
        reports.append(report)
        seen: set[str] = set()  # with ``again``, a delivered session stays selectable
        while deadline is None or time.monotonic() < deadline:
            due = [
                s
                for s in store.sessions_to_export(
                    impl.name, since=since, again=again, ids=ids, limit=BATCH + len(seen)
                )
                if s.id not in seen
            ][:BATCH]
            if not due:
                break
            seen.update(s.id for s in due)
            report["offered"] += len(due)
            try:
                records = [
                    record(
                        store, s, again and store.export_marks(s.id).get(impl.name) == s.ended_at
                    )
                    for s in due
                ]
                answer = impl(sessions=records, config=config)
            except Exception as exc:  # a plugin's failure is reported, never fatal
                log.warning("exporter %s failed: %s", impl.name, exc)
                report["error"] = f"{type(exc).__name__}: {exc}"
                break
            delivered = {str(i) for i in answer or ()}
            marks = [(s.id, s.ended_at or "") for s in due if s.id in delivered]
            store.mark_exported(impl.name, marks)
            report["delivered"] += len(marks)
            if not marks:
                break  # not configured, or its destination is down: try again later
    return reports


def after_session(config: Config, session_id: str) -> None:
    """The runner's last step: offer its finished session to the exporters, on a thread of
    its own connection, waiting at most :data:`AFTER_SESSION_DEADLINE_SECS`. What is not
    delivered by then stays due for the daemon and ``ecc export``."""
    try:
        if not installed():
            return
    except Exception as exc:
        log.warning("exporters not found: %s", exc)
        return
    limit = time.monotonic() + AFTER_SESSION_DEADLINE_SECS

    def work() -> None:
        from ecc.store.open import open_store

        try:
            with open_store(config=config) as store:
                export(store, config, ids=[session_id], deadline=limit)
        except Exception as exc:
            log.warning("export of session %s failed: %s", session_id, exc)

    thread = threading.Thread(target=work, name="ecc-export", daemon=True)
    thread.start()
    thread.join(max(0.0, limit - time.monotonic()))


class Backoff:
    """The daemon's spacing of export tries, per exporter: one that delivered nothing of what it
    was offered (its destination is down, or it is not configured) is tried again after a wait
    that doubles from :attr:`first` up to :attr:`longest` seconds; a delivery resets it."""

    first = 15.0
    longest = 600.0

    def __init__(self) -> None:
        self.failures: dict[str, int] = {}
        self.next_try: dict[str, float] = {}

    def waiting(self) -> set[str]:
        """The exporters not to try now."""
        now = time.monotonic()
        return {name for name, at in self.next_try.items() if now < at}

    def update(self, reports: list[dict[str, Any]]) -> None:
        for report in reports:
            name = report["exporter"]
            if report["offered"] and not report["delivered"]:
                failures = self.failures[name] = self.failures.get(name, 0) + 1
                wait = min(self.longest, self.first * 2 ** (failures - 1))
                self.next_try[name] = time.monotonic() + wait
            else:
                self.failures.pop(name, None)
                self.next_try.pop(name, None)


def daemon_step(store: Store, config: Config, backoff: Backoff) -> list[dict[str, Any]]:
    """One daemon pass's exports: every due session of each exporter the backoff allows, for
    at most a minute. Reports only the exporters that were offered something."""
    if not installed():
        return []
    reports = export(store, config, skip=backoff.waiting(), deadline=time.monotonic() + 60.0)
    backoff.update(reports)
    return [r for r in reports if r["offered"]]
