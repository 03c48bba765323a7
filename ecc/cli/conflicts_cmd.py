"""``ecc conflicts [resolve|dismiss ID]``: sessions that changed the same file, and closing
an incident (the daemon finds them and applies ``[conflict_resolution]``)."""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    return open_store(config=config), config


@click.group("conflicts", invoke_without_command=True)
@click.option("--all", "show_all", is_flag=True, help="Include closed incidents.")
@json_option
@click.pass_context
def conflicts_group(ctx: click.Context, show_all: bool, as_json: bool) -> None:
    """List conflicts: two active sessions changed the same file (open ones unless --all).

    The daemon records each (file, session pair) once and applies [conflict_resolution]: it
    pauses one session and resumes it when the other is merged or removed. `ecc conflicts
    resolve ID` resumes the paused session now; `ecc conflicts dismiss ID` leaves it as it is.
    """
    if ctx.invoked_subcommand is not None:
        return
    from ecc.sessions import conflicts

    store, _ = _open()
    rows = store.list_conflicts(open_only=not show_all)
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("No conflicts." if show_all else "No open conflicts (--all shows closed ones).")
        return
    for row in rows:
        say(f"{row['id']:>5}  {row['created_at']}  {conflicts.describe(row)}")


def _close(conflict_id: int, as_json: bool, resume: bool) -> None:
    from ecc.sessions import conflicts

    store, config = _open()
    result = conflicts.close(store, conflict_id, config, resume=resume)
    if as_json:
        emit_json(result)
        return
    say(f"{conflicts.closed_summary(result)}.")


@conflicts_group.command("resolve")
@click.argument("conflict_id", type=int)
@json_option
def resolve_command(conflict_id: int, as_json: bool) -> None:
    """Close an incident and resume its paused session (unless another incident holds it)."""
    _close(conflict_id, as_json, resume=True)


@conflicts_group.command("dismiss")
@click.argument("conflict_id", type=int)
@json_option
def dismiss_command(conflict_id: int, as_json: bool) -> None:
    """Close an incident without resuming anything."""
    _close(conflict_id, as_json, resume=False)
