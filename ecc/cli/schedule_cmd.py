"""``ecc schedule add|list|rm|run-now|enable|disable``: tasks the daemon starts on a cron."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    return open_store(config=config), config


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    """A schedule as ``--json`` prints it (booleans as booleans)."""
    return {
        **row,
        "enabled": bool(row["enabled"]),
        "skip_if_running": bool(row["skip_if_running"]),
    }


@click.group("schedule")
def schedule_group() -> None:
    """Start a task as a session on a cron schedule (run by ecc daemon).

    Cron expressions have five fields (minute hour day-of-month month day-of-week) in the
    schedule's time zone (--tz, default UTC). Runs missed while no daemon ran start once when
    it next runs, never once per missed window.
    """


@schedule_group.command("add")
@click.argument("cron")
@click.argument("task")
@click.option("--harness", "-a", required=True, metavar="NAME", help="The harness to run.")
@click.option("--profile", metavar="NAME", help="An agent profile ([agent_profiles.NAME]).")
@click.option(
    "--tz", "timezone", default="UTC", show_default=True, help="The cron's IANA time zone."
)
@click.option(
    "--allow-overlap",
    is_flag=True,
    help="Start a run even while the previous one's session is still running (default: skip).",
)
@click.option(
    "--catch-up",
    type=click.Choice(["once", "skip"]),
    default="once",
    show_default=True,
    help="Runs missed while no daemon ran: start one when it next runs, or none.",
)
@json_option
def add_command(
    cron: str,
    task: str,
    harness: str,
    profile: str | None,
    timezone: str,
    allow_overlap: bool,
    catch_up: str,
    as_json: bool,
) -> None:
    """Add a schedule running TASK on CRON in the current directory."""
    from ecc.sessions import schedules

    store, config = _open()
    row = schedules.add(
        store,
        config,
        cron=cron,
        task=task,
        harness=harness,
        profile=profile,
        timezone=timezone,
        skip_if_running=not allow_overlap,
        catch_up=catch_up,
    )
    if as_json:
        emit_json(_shown(row))
        return
    local, utc = schedules.describe_next(row["next_run_at"])
    say(f"Schedule {row['id']} added; next run {local} ({utc}).")


@schedule_group.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """List schedules with their next run (local time and UTC) and last outcome."""
    from ecc.sessions import schedules

    store, _ = _open()
    rows = store.list_schedules()
    if as_json:
        emit_json([_shown(row) for row in rows])
        return
    if not rows:
        say("No schedules (ecc schedule add adds one).")
        return
    say(
        f"{'ID':<8}  {'CRON':<15} {'TZ':<12} {'HARNESS':<8} {'NEXT RUN (LOCAL)':<22} "
        f"{'NEXT RUN (UTC)':<20} {'LAST':<8} TASK"
    )
    for row in rows:
        local, utc = schedules.describe_next(row["next_run_at"])
        if not row["enabled"]:
            local, utc = "disabled", "-"
        task = (str(row["task"]).splitlines() or [""])[0][:50]
        say(
            f"{row['id']:<8}  {row['cron']:<15} {row['timezone']:<12} {row['harness']:<8} "
            f"{local:<22} {utc:<20} {row['last_outcome'] or '-':<8} {task}"
        )


@schedule_group.command("rm")
@click.argument("schedule_id")
@json_option
def rm_command(schedule_id: str, as_json: bool) -> None:
    """Remove a schedule (its sessions stay)."""
    store, _ = _open()
    row = store.find_schedule(schedule_id)
    store.delete_schedule(row["id"])
    if as_json:
        emit_json({"schedule": row["id"], "removed": True})
    else:
        say(f"Schedule {row['id']} removed.")


@schedule_group.command("run-now")
@click.argument("schedule_id")
@json_option
def run_now_command(schedule_id: str, as_json: bool) -> None:
    """Start the schedule's session once now; its next run stays where it was."""
    from ecc.sessions import schedules

    store, _ = _open()
    row = store.find_schedule(schedule_id)
    session = schedules.start_now(store, row)
    if as_json:
        emit_json({"schedule": row["id"], "session": session.id})
    else:
        say(f"Schedule {row['id']} started session {session.id}.")


def _switch(schedule_id: str, enabled: bool, as_json: bool) -> None:
    from ecc.sessions import schedules

    store, _ = _open()
    row = store.find_schedule(schedule_id)
    following = schedules.next_run(row["cron"], row["timezone"], datetime.now(UTC))
    store.set_schedule_enabled(row["id"], enabled, following)
    if as_json:
        emit_json({"schedule": row["id"], "enabled": enabled, "next_run_at": following})
    else:
        say(f"Schedule {row['id']} {'enabled' if enabled else 'disabled'}.")


@schedule_group.command("enable")
@click.argument("schedule_id")
@json_option
def enable_command(schedule_id: str, as_json: bool) -> None:
    """Switch a schedule back on, from its next occurrence (no catch-up for the time off)."""
    _switch(schedule_id, True, as_json)


@schedule_group.command("disable")
@click.argument("schedule_id")
@json_option
def disable_command(schedule_id: str, as_json: bool) -> None:
    """Switch a schedule off without removing it."""
    _switch(schedule_id, False, as_json)
