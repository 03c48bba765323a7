"""Schedules: a task the daemon starts as a session whenever its cron expression comes due.

A schedule is five cron fields (minute hour day-of-month month day-of-week, parsed by croniter;
the reference's seconds-first 6/7-field form is refused in one line, not guessed at) in a time
zone (IANA name, default UTC), plus what ``ecc run`` would be given in the directory where
``ecc schedule add`` ran. Each daemon pass calls :func:`run_due`, which for every due schedule:

1. claims the run by moving ``next_run_at`` to the first occurrence after *now* with a
   conditional update (so missed windows while no daemon ran collapse into one run, and two
   daemons, or a restart, never start the same window twice);
2. skips it when ``skip_if_running`` is on and the session it last started is still active,
   or when it was missed (due over :data:`LATE_SECS` ago) and its ``catch_up`` is ``skip``;
3. starts the session through :func:`ecc.sessions.service.start` with the configuration of the
   schedule's directory, as ``ecc run`` there would see it (trust rules apply);
4. records the outcome on the schedule; an error is recorded and the pass goes on.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ecc.contract.errors import EccError
from ecc.store.models import TERMINAL, iso, parse_iso

if TYPE_CHECKING:
    from zoneinfo import ZoneInfo

    from ecc.store.base import Store

log = logging.getLogger("ecc.schedules")

CRON_FIELDS = ("minute", "hour", "day-of-month", "month", "day-of-week")
CATCH_UP = ("once", "skip")  # runs missed while no daemon ran: start one, or start none
LATE_SECS = 60.0  # a run due longer ago than this was missed (catch_up = skip does not start it)
MAX_TASK_CHARS = 100_000


def check_cron(expression: str) -> str:
    """The expression with its fields single-spaced, or :class:`EccError` naming the bad field."""
    from croniter import croniter

    fields = expression.split()
    if len(fields) != len(CRON_FIELDS):
        raise EccError(
            f"cron expression {expression!r} has {len(fields)} fields; ecc takes 5 "
            "(minute hour day-of-month month day-of-week; no seconds or year field)"
        )
    for index, (name, value) in enumerate(zip(CRON_FIELDS, fields, strict=True)):
        probe = ["*"] * len(CRON_FIELDS)
        probe[index] = value
        if not croniter.is_valid(" ".join(probe)):
            raise EccError(f"cron expression {expression!r}: bad {name} field {value!r}")
    normal = " ".join(fields)
    try:  # each field fine, the whole maybe not: 31 February never comes
        croniter(normal, datetime.now(UTC)).get_next(datetime)
    except (ValueError, KeyError):
        raise EccError(f"cron expression {expression!r} never comes due") from None
    return normal


def check_timezone(name: str) -> ZoneInfo:
    """The zone called ``name`` (IANA, e.g. ``Europe/Paris``), or :class:`EccError`."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise EccError(f"unknown time zone {name!r} (an IANA name such as Europe/Paris)") from None


def next_run(cron: str, timezone: str, after: datetime) -> str:
    """The first occurrence of ``cron`` in ``timezone`` strictly after ``after``, as UTC text."""
    from croniter import croniter

    local = after.astimezone(check_timezone(timezone))
    moment: datetime = croniter(cron, local).get_next(datetime)
    return iso(moment)


def add(
    store: Store,
    config: Any,
    *,
    cron: str,
    task: str,
    harness: str,
    profile: str | None = None,
    timezone: str = "UTC",
    cwd: Path | None = None,
    skip_if_running: bool = True,
    catch_up: str = "once",
) -> dict[str, Any]:
    """Validate and record a schedule bound to ``cwd`` (default: the current directory)."""
    import secrets

    from ecc.runtime.config.profiles import resolve_profile
    from ecc.sessions import harnesses

    cron = check_cron(cron)
    check_timezone(timezone)
    if catch_up not in CATCH_UP:
        raise EccError(f"catch-up policy {catch_up!r}: one of {', '.join(CATCH_UP)}")
    task = task.strip()
    if not task:
        raise EccError("the task must not be empty")
    if len(task) > MAX_TASK_CHARS:
        raise EccError(f"the task is longer than {MAX_TASK_CHARS} characters")
    directory = (cwd or Path.cwd()).expanduser()
    if not directory.is_dir():
        raise EccError(f"directory {directory} does not exist")
    if profile:
        resolve_profile(config.agent_profiles, profile)  # an unknown profile is a ConfigError
    return store.insert_schedule(
        secrets.token_hex(4),
        cron=cron,
        timezone=timezone,
        harness=harnesses.canonical_name(harness, config),
        profile_name=profile or None,
        task=task,
        working_dir=str(directory.resolve()),
        enabled=1,
        skip_if_running=int(skip_if_running),
        catch_up=catch_up,
        next_run_at=next_run(cron, timezone, datetime.now(UTC)),
    )


def start_now(store: Store, schedule: dict[str, Any]) -> Any:
    """Start the schedule's session now (its next run is not moved); returns the session.

    The configuration is the schedule directory's, as ``ecc run`` there would load it: a
    project file's guarded keys count only once trusted.
    """
    from ecc.runtime.config import view as fastconfig
    from ecc.sessions import manager, service

    directory = Path(schedule["working_dir"])
    if not directory.is_dir():
        raise EccError(f"the schedule's directory {directory} does not exist")
    config = fastconfig.view(directory)
    request = manager.Request(
        task=schedule["task"],
        harness=schedule["harness"],
        profile=schedule["profile_name"],
        name=f"schedule {schedule['id']}",
        cwd=directory,
    )
    session = service.start(store, request, config)
    store.record_schedule_run(schedule["id"], "started", session.id, None)
    return session


def still_running(store: Store, schedule: dict[str, Any]) -> str | None:
    """The id of the schedule's last session when it has not ended yet, else None."""
    session_id = schedule.get("last_session_id")
    if not session_id:
        return None
    session = store.get_session(session_id)
    return session_id if session is not None and session.state not in TERMINAL else None


def run_due(store: Store, now: datetime | None = None) -> list[dict[str, Any]]:
    """Start every due schedule once (see the module's steps); returns what each one did."""
    moment = now or datetime.now(UTC)
    results: list[dict[str, Any]] = []
    for schedule in store.due_schedules(iso(moment)):
        result = _run_one(store, schedule, moment)
        if result is not None:
            results.append(result)
    return results


def _run_one(store: Store, schedule: dict[str, Any], moment: datetime) -> dict[str, Any] | None:
    schedule_id = schedule["id"]
    try:
        following = next_run(schedule["cron"], schedule["timezone"], moment)
    except Exception as exc:  # a row edited by hand: switch it off rather than retry each pass
        error = f"cannot compute the next run: {exc}"
        store.set_schedule_enabled(schedule_id, False, schedule["next_run_at"])
        store.record_schedule_run(schedule_id, "failed", None, error + "; disabled")
        return {"schedule": schedule_id, "outcome": "failed", "error": error}
    if not store.claim_schedule_run(schedule_id, schedule["next_run_at"], following):
        return None  # another daemon, or an enable/disable, moved it first
    result: dict[str, Any] = {"schedule": schedule_id, "next_run_at": following}
    due = parse_iso(schedule["next_run_at"])
    if schedule["catch_up"] == "skip" and due and (moment - due).total_seconds() > LATE_SECS:
        reason = (
            f"skipped: missed at {schedule['next_run_at']} while no daemon ran (catch_up = skip)"
        )
        store.record_schedule_run(schedule_id, "skipped", None, reason)
        return {**result, "outcome": "skipped", "reason": reason}
    busy = still_running(store, schedule) if schedule["skip_if_running"] else None
    if busy:
        reason = f"skipped: its previous session {busy} is still running"
        store.record_schedule_run(schedule_id, "skipped", None, reason)
        return {**result, "outcome": "skipped", "reason": reason}
    try:
        session = start_now(store, schedule)
    except Exception as exc:  # recorded on this schedule; the others still run
        from ecc.sessions.service import NotStarted

        message = exc.message if isinstance(exc, EccError) else f"{type(exc).__name__}: {exc}"
        session_id = exc.session.id if isinstance(exc, NotStarted) else None
        log.warning("schedule %s did not start: %s", schedule_id, message)
        store.record_schedule_run(schedule_id, "failed", session_id, message)
        return {**result, "outcome": "failed", "error": message}
    return {**result, "outcome": "started", "session": session.id}


def describe_next(text: str | None) -> tuple[str, str]:
    """``next_run_at`` as (local time, UTC) for people: ``2026-12-02 09:00 CET``."""
    moment = parse_iso(text)
    if moment is None:
        return ("-", "-")
    local = moment.astimezone()
    return (local.strftime("%Y-%m-%d %H:%M %Z"), moment.strftime("%Y-%m-%d %H:%M UTC"))
