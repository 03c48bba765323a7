"""``ecc group ID``, ``ecc group pick ID SESSION`` and ``ecc groups``: groups of sessions.

A group is what ``ecc run --harness a,b --count N`` or ``--template NAME`` started
(:mod:`ecc.sessions.groups`); ``ecc group ID`` shows its sessions side by side, ``pick`` merges
one and removes the others' worktrees and branches.
"""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.sessions.daemon import reap_quietly
    from ecc.store.open import open_store

    config = view()
    store = open_store(config=config)
    reap_quietly(store, config)  # a member whose runner died shows as failed, as everywhere
    return store, config


class _ShowByDefault(click.Group):
    """``ecc group ID`` is ``ecc group show ID``: a first word that names no subcommand is an
    id."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        first = next((arg for arg in args if not arg.startswith("-")), None)
        if first is not None and first not in self.commands:
            args = ["show", *args]
        return super().parse_args(ctx, args)


@click.group("group", cls=_ShowByDefault)
def group_group() -> None:
    """Show a group of sessions side by side (ecc group ID), or pick one (ecc group pick).

    Groups are started by ecc run --harness a,b --count N [--check COMMAND] or ecc run
    --template NAME. Ids accept a unique prefix.
    """


def _cell(value: Any, width: int) -> str:
    text = str(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def print_group(shown: dict[str, Any]) -> None:
    """The table ``ecc group ID`` prints for a report of :func:`ecc.sessions.groups.report`."""
    from ecc.runtime.money import format_cost

    say(f"Group {shown['id']}  {shown['state']}  {shown['kind']}: {shown['title']}")
    if shown["check_command"]:
        say(f"Check: {shown['check_command']}")
    say(
        f"{'#':>2}  {'SESSION':<12}  {'HARNESS':<8} {'STATE':<10} {'FILES':>5} {'+':>6} "
        f"{'-':>6} {'TOKENS':>8} {'COST':>8}  CHECK"
    )
    for member in shown["members"]:
        changes = member["changes"]
        files, added, deleted = (
            (changes["files"], f"+{changes['added']}", f"-{changes['deleted']}")
            if changes
            else ("-", "-", "-")
        )
        check = member["check"]
        check_text = "-"
        if check is not None:
            check_text = check["state"]
            if check["exit_code"] is not None and check["state"] != "passed":
                check_text += f" ({check['exit_code']})"
        mark = "  (picked)" if member["picked"] else ""
        step = f"  {member['step']}" if member["step"] else ""
        say(
            f"{member['position']:>2}  {member['session_id'] or '-':<12}  "
            f"{_cell(member['harness'] or '-', 8):<8} {_cell(member['state'], 10):<10} "
            f"{files:>5} {added:>6} {deleted:>6} {member['tokens']:>8} "
            f"{format_cost(member['cost_usd']):>8}  {check_text}{mark}{step}"
        )
    for member in shown["members"]:
        check = member["check"]
        if check is not None and check["state"] not in ("passed", "running"):
            lines = [ln for ln in check["output_tail"].splitlines() if ln.strip()][-5:]
            say(f"#{member['position']} check output (last lines):")
            for line in lines:
                say(f"  {line}")
        if member["status"] in ("failed", "skipped") and member["note"]:
            say(f"#{member['position']} {member['status']}: {member['note']}")


@group_group.command("show")
@click.argument("group_ref", metavar="ID")
@json_option
def show_command(group_ref: str, as_json: bool) -> None:
    """Each session of the group: state, files changed, +/- lines, tokens, cost, check."""
    from ecc.sessions import groups

    store, _ = _open()
    shown = groups.report(store, store.find_group(group_ref))
    if as_json:
        emit_json(shown)
    else:
        print_group(shown)


@group_group.command("pick")
@click.argument("group_ref", metavar="ID")
@click.argument("session_ref", metavar="SESSION")
@json_option
def pick_command(group_ref: str, session_ref: str, as_json: bool) -> None:
    """Merge SESSION's branch (its uncommitted changes committed first) into its base branch
    and remove the other sessions' worktrees and branches, uncommitted work included."""
    from ecc.sessions import groups

    store, _ = _open()
    result = groups.pick(store, store.find_group(group_ref), session_ref)
    if as_json:
        emit_json(result)
        return
    merge = result["merge"]
    say(f"Merged {merge['branch']} into {merge['base']} ({merge['after'][:12]}).")
    for removed in result["removed"]:
        say(f"Removed the worktree and branch of session {removed['id']}.")


@click.command("groups")
@click.option("--limit", type=int, default=20, show_default=True, help="How many, newest first.")
@json_option
def groups_command(limit: int, as_json: bool) -> None:
    """Groups of sessions, newest first: id, state, kind, sessions, name."""
    from ecc.sessions import groups

    if limit < 1:
        raise click.BadParameter("must be at least 1", param_hint="--limit")
    store, _ = _open()
    shown = [groups.report(store, group, with_changes=False) for group in store.list_groups(limit)]
    if as_json:
        emit_json(shown)
        return
    if not shown:
        say("No groups.")
        return
    from ecc.store.models import age_label

    say(f"{'ID':<8}  {'STATE':<9} {'KIND':<8} {'SESSIONS':>8} {'AGE':>9}  NAME")
    for group in shown:
        say(
            f"{group['id']:<8}  {group['state']:<9} {group['kind']:<8} "
            f"{len(group['members']):>8} {age_label(group['created_at']):>9}  {group['title']}"
        )
