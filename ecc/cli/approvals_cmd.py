"""``ecc approvals``, ``ecc approve ID``, ``ecc deny ID``: answer the tool calls ``ecc hook`` holds.

A managed session's ``require_confirmation`` call waits under ``risk.enforce`` until a person
decides or ``risk.approval_timeout`` passes (:mod:`ecc.observability.approvals`); these record
the decision with the OS user as who made it. An approval decided (or timed out) already is a
one-line error.
"""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _store() -> Any:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    return open_store(config=view())


def _expires_in(approval: dict[str, Any]) -> str:
    from ecc.store.models import age_seconds

    left = -(age_seconds(approval["expires_at"]) or 0.0)
    return f"{left:.0f}s" if left < 120 else f"{left / 60:.0f}m"


@click.command("approvals")
@click.option("--all", "show_all", is_flag=True, help="Include decided ones (newest 200).")
@json_option
def approvals_command(show_all: bool, as_json: bool) -> None:
    """List the tool calls waiting for a decision (oldest first)."""
    from ecc.observability import approvals

    store = _store()
    try:
        rows = approvals.history(store, limit=200) if show_all else approvals.pending(store)
    finally:
        store.close()
    if as_json:
        emit_json(rows)
        return
    if not rows:
        say("No approvals." if show_all else "No tool call is waiting for a decision.")
        return
    for row in rows:
        score = f"{row['score']:.2f}" if row["score"] is not None else "-"
        if row["decision"] is None:
            status = f"waiting, {_expires_in(row)} left"
        else:
            status = f"{row['decision']} by {row['decided_by']}"
        say(
            f"{row['id']}  session {row['session_id'] or '-'}  {row['tool']}  risk {score}  "
            f"{status}  {row['input_excerpt'][:80]}"
        )
    if any(row["decision"] is None for row in rows):
        say("Answer with: ecc approve ID | ecc deny ID [--reason TEXT]")


def _decide(ref: str, decision: str, reason: str | None, as_json: bool) -> None:
    from ecc.observability import approvals

    store = _store()
    try:
        decided = approvals.decide(store, ref, decision, approvals.person(), reason)
    finally:
        store.close()
    if as_json:
        emit_json(decided)
        return
    verb = "Approved" if decision == "allow" else "Denied"
    say(f"{verb} {decided['id']}: {decided['tool']} in session {decided['session_id'] or '-'}")


@click.command("approve")
@click.argument("approval_ref", metavar="ID")
@json_option
def approve_command(approval_ref: str, as_json: bool) -> None:
    """Let a held tool call run (ID or a unique prefix, from ecc approvals)."""
    _decide(approval_ref, "allow", None, as_json)


@click.command("deny")
@click.argument("approval_ref", metavar="ID")
@click.option("--reason", metavar="TEXT", help="Why; the agent is told.")
@json_option
def deny_command(approval_ref: str, reason: str | None, as_json: bool) -> None:
    """Refuse a held tool call (ID or a unique prefix, from ecc approvals)."""
    _decide(approval_ref, "deny", reason, as_json)
