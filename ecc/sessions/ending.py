"""What a runner does around a session's end besides recording it: a group's check, the next
step of a sequence, the notifiers and the exporters (the parent's inbox:
:func:`ecc.sessions.child_results.tell_parent`).

Each step is its own function so the runner reads as the sequence of a run; none of them may
change the session's outcome or fail the runner, so each logs its own failure and returns.
"""

from __future__ import annotations

import logging
from typing import Any

from ecc.store.models import Session

log = logging.getLogger("ecc.runner")


def run_group_check(session: Session, writer: Any) -> None:
    """Run the session's group check, if it has one (never changes the outcome): looked up
    and recorded on the store thread, run here, so a long check never holds the store."""
    from ecc.sessions import group_checks

    try:
        current = writer.call(lambda db: db.get_session(session.id)) or session
        check = writer.call(lambda db: group_checks.check_of(db, current))
        if check is None:
            return
        result = group_checks.run_check(check, current)
        writer.call(lambda db: group_checks.record_check(db, current, check, result))
    except Exception as exc:
        log.warning("the group check of session %s failed: %s", session.id, exc)


def advance_group(session: Session, writer: Any, config: Any) -> None:
    """A sequence's next step starts as soon as this one's end is recorded, before the
    notifications (which may take their deadline); the run's end dispatches again."""
    from ecc.sessions import groups

    def advance(db: Any) -> None:
        if db.group_ids_of([session.id]):
            groups.advance(db, config)

    try:
        writer.call(advance)
    except Exception as exc:
        log.warning("starting the next step after session %s failed: %s", session.id, exc)


def notify(config: Any, event: str, session: Session, body: str) -> None:
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
            config,
        )
    except Exception as exc:
        log.warning("notification %s failed: %s", event, exc)


def export(config: Any, session_id: str, outcome: str) -> None:
    """The session's end is recorded (its slot free, ``ecc run`` returned): offer it to the
    exporter plugins, within a deadline (:func:`ecc.observability.exports.after_session`).
    Never changes the outcome; what is not delivered now the daemon offers again."""
    if outcome in ("unknown session", "refused-duplicate"):
        return  # another runner owns (and exports) the session
    try:
        from ecc.observability.exports import after_session

        after_session(config, session_id)
    except Exception as exc:
        log.warning("export after the session failed: %s", exc)
