"""``ecc send ID MESSAGE``: give a session's agent its next instruction (a follow-up)."""

from __future__ import annotations

import sys

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.contract.errors import EccError


def read_message(message: str) -> str:
    """``-`` reads the message from stdin (one byte past the limit, so too long is refused)."""
    if message != "-":
        return message
    from ecc.sessions.manager import MAX_MESSAGE_BYTES

    data = sys.stdin.buffer.read(MAX_MESSAGE_BYTES * 2 + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise EccError("the message must be valid UTF-8 text") from None


@click.command("send")
@click.argument("session_ref", metavar="ID")
@click.argument("message", metavar="MESSAGE")
@json_option
@click.option("--remote", metavar="NAME", help="Ask the server NAME (see ecc remote add).")
def send_command(session_ref: str, message: str, as_json: bool, remote: str | None) -> None:
    """Continue a session with MESSAGE as its agent's next instruction (- reads stdin).

    The harness resumes its own conversation in the same worktree. A running session keeps
    the message queued until its current run ends; a finished one runs at once.
    """
    text = read_message(message)
    if remote:
        from ecc.remote.client import send_remote

        send_remote(remote, session_ref, text, as_json)
        return
    from ecc.runtime.config.view import view
    from ecc.sessions import manager
    from ecc.store.open import open_store

    config = view()
    store = open_store(config=config)
    session, sent = manager.send(store, manager.find(store, session_ref), text, config)
    if as_json:
        emit_json({**session.as_dict(), "message": sent})
    else:
        say(manager.sent_outcome(session.id, session.state.value, sent["status"]))
