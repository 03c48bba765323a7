"""``ecc notify``: send a test event through the notifiers, and show what was sent."""

from __future__ import annotations

import click

from ecc.cli.output import emit_json, json_option, say


@click.group("notify")
def notify_group() -> None:
    """Test and inspect notifications (notifiers are ecc.notifiers plugins chosen in config)."""


@notify_group.command("test")
@click.option("--notifier", default=None, help="Only this notifier (even if config omits it).")
@json_option
def test_command(notifier: str | None, as_json: bool) -> None:
    """Send a test event to every selected notifier (or one), ignoring filters and quiet hours."""
    from ecc.contract.errors import EccError
    from ecc.contract.types import Notification
    from ecc.observability.notify import _deliver, _record
    from ecc.runtime.config.view import view

    config = view()
    notification = Notification(
        event="test",
        title="ecc: test notification",
        body="If you can read this, ecc can reach you.",
    )
    outcome = _deliver(notification, config, notifier, force=True)
    _record(notification, config, outcome)
    if as_json:
        emit_json({"delivery": outcome})
    else:
        for name, status in outcome.items():
            say(f"{name}: {status}")
        if not outcome:
            say("no notifier is selected ([notifications] notifiers)")
    failed = [name for name, status in outcome.items() if status != "sent"]
    if failed:
        raise EccError(f"notification not delivered by: {', '.join(failed)}")


@notify_group.command("history")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000))
@json_option
def history_command(limit: int, as_json: bool) -> None:
    """The most recent notifications and what each notifier did with them."""
    from ecc.store.open import open_store

    store = open_store()
    try:
        rows = store.list_notifications(limit)
    finally:
        store.close()
    if as_json:
        emit_json(rows)
        return
    for row in rows:
        delivery = row.get("data", {}).get("delivery", {})
        summary = ", ".join(f"{k}={v.split(':')[0]}" for k, v in delivery.items())
        say(f"{row['created_at']}  {row['event']:<18} {row['title']}  [{summary}]")
