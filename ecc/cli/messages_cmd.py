"""``ecc messages send|inbox``: messages left for sessions, and the results of their children.

A person leaves a session a message (``send``), which its agent reads through the sessions MCP
server (``message_inbox``); ``inbox`` shows what a session received: messages from people and
other sessions, and a ``child_result`` for each child that ended. Message texts are untrusted
data: printed through the sanitiser, or escaped in ``--json``.
"""

from __future__ import annotations

from typing import Any

import click

from ecc.cli.output import emit_json, json_option, say


def _open() -> tuple[Any, Any]:
    from ecc.runtime.config.view import view
    from ecc.store.open import open_store

    config = view()
    return open_store(config=config), config


@click.group("messages")
def messages_group() -> None:
    """Leave messages for sessions and read a session's inbox."""


@messages_group.command("send")
@click.argument("session_ref", metavar="ID")
@click.argument("text", metavar="TEXT")
@json_option
def send_command(session_ref: str, text: str, as_json: bool) -> None:
    """Leave TEXT in session ID's inbox (its agent reads it with the message_inbox tool)."""
    from ecc.cli.send_cmd import read_message
    from ecc.sessions import delegation, manager

    store, _ = _open()
    session = manager.find(store, session_ref)
    sent = delegation.send_message(store, session.id, read_message(text))
    if as_json:
        emit_json({"message": sent})
    else:
        say(f"Message {sent['id']} left for session {session.id}")


@messages_group.command("inbox")
@click.argument("session_ref", metavar="[ID|latest]", default="latest")
@click.option("--unread", is_flag=True, help="Only messages the session has not read yet.")
@click.option(
    "--limit", type=click.IntRange(1, 1000), default=100, show_default=True, help="At most N."
)
@json_option
def inbox_command(session_ref: str, unread: bool, limit: int, as_json: bool) -> None:
    """Show session ID's inbox, oldest first (reading it here marks nothing read)."""
    from ecc.sessions import manager

    store, _ = _open()
    session = manager.find(store, session_ref)
    messages = store.inbox(session.id, unread_only=unread, limit=limit)
    if as_json:
        emit_json({"session": session.id, "messages": messages})
        return
    if not messages:
        say(f"No messages for session {session.id}.")
        return
    for message in messages:
        sender = message["sender_id"] or "a person"
        status = "" if message["read_at"] else " (unread)"
        say(f"#{message['id']} {message['created_at']} {message['kind']} from {sender}{status}")
        for line in str(message["text"]).splitlines() or [""]:
            say(f"    {line}")
