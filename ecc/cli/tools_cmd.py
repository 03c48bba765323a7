"""``ecc tools [ID]``: a session's tool calls, each once, with its risk and who saw it.

A call ``ecc hook`` decided and the harness's output showed is one row (``both``); one only the
output showed was scored after it ran and is ``observed`` (:mod:`ecc.observability.toolcalls`).
"""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say

HEADER = ("TIME", "TOOL", "RISK", "ACTION", "DECISION", "SOURCE", "INPUT")
WIDTHS = (8, 20, 5, 20, 8, 6)  # every column but the input, which takes the rest of the line


@click.command("tools")
@click.argument("session_ref", metavar="[ID|latest]", default="latest")
@click.option(
    "--limit", type=click.IntRange(1, 10_000), default=500, show_default=True,
    help="Show the newest N calls.",
)  # fmt: skip
@json_option
def tools_command(session_ref: str, limit: int, as_json: bool) -> None:
    """List a session's tool calls, oldest first (default: the latest session)."""
    from ecc.observability.toolcalls import listing
    from ecc.runtime.config.view import view
    from ecc.sessions.manager import find
    from ecc.store.open import open_store

    store = open_store(config=view())
    try:
        session = find(store, session_ref)
        calls = listing(store, session.id, limit)
    finally:
        store.close()
    if as_json:
        emit_json(calls)
        return
    if not calls:
        say(f"Session {session.id} has recorded no tool calls.")
        return
    say(_row(HEADER))
    for call in calls:
        say(_row(_cells(call)))


def _cells(call: dict[str, Any]) -> tuple[str, ...]:
    score = call["score"]
    return (
        str(call["created_at"] or "")[11:19],
        call["tool"],
        f"{score:.2f}" if score is not None else "-",
        call["action"] or "-",
        call["decision"] or "-",
        call["source"],
        call["input_excerpt"],
    )


def _row(cells: tuple[str, ...]) -> str:
    """One table line: each cell sanitised to one line, cut to its column."""
    from ecc.runtime.terminal import sanitize

    flat = [" ".join(sanitize(cell).split()) for cell in cells]
    fixed = [
        (cell if len(cell) <= width else cell[: width - 1] + "…").ljust(width)
        for cell, width in zip(flat, WIDTHS, strict=False)
    ]
    return "  ".join([*fixed, flat[-1]]).rstrip()
