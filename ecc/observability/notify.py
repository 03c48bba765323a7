"""Dispatch of events to notifier plugins.

The runner and the daemon (never a UI) build a :class:`ecc.contract.types.Notification` and call
:func:`send`. Every notifier selected in ``[notifications].notifiers`` receives it through its
``ecc_notify`` hook, subject to:

* the global event filter ``[notifications].events`` and a per-notifier one
  (``[notifications.settings.NAME] events = [...]``);
* quiet hours (``[notifications].quiet_hours = "22:00-07:30"``, local time, may wrap midnight):
  every notifier but ``log`` (which only writes a file) is silent inside them, unless its settings
  say ``ignore_quiet_hours = true``.

Each notifier runs in its own thread with a deadline (``deadline`` in its settings, default 30 s),
so one that fails or hangs never stops the others; ``send`` never raises. Every notification is
recorded in the session store with what happened at each notifier.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ecc.contract.types import Notification
    from ecc.runtime.plugins.calls import Implementation

from ecc.runtime.config.quiet_hours import in_quiet_hours

log = logging.getLogger("ecc.observability.notify")

EVENTS = (
    "session_started",
    "session_completed",
    "session_failed",
    "budget_alert",
    "approval_request",
    "session_conflict",
)
DEFAULT_DEADLINE_SECS = 30.0
ALWAYS_AUDIBLE = frozenset({"log"})


def _notifiers(config: Any, only: str | None) -> list[Implementation]:
    """The selected notifiers in call order; ``only`` picks one, even one config does not select
    (``ecc notify test --notifier NAME``), loaded from its entry point alone."""
    from ecc.contract.hookspecs import NOTIFIERS
    from ecc.runtime.plugins.calls import implementations
    from ecc.runtime.plugins.loader import PluginSet, discover, get_plugins

    found = implementations(get_plugins(config).hook.ecc_notify)
    if only is None:
        return found
    chosen = [impl for impl in found if impl.name == only]
    if not chosen:
        value = dict(discover().get(NOTIFIERS, [])).get(only)
        if value is not None:
            single = PluginSet(None, lazy=True, entry_points={NOTIFIERS: [(only, value)]})
            chosen = implementations(single.hook.ecc_notify)
    return chosen


def _gate(name: str, settings: dict[str, Any], notification: Notification, config: Any) -> str:
    """ "" when ``name`` should deliver, else why not (recorded)."""
    events = settings.get("events")
    if isinstance(events, list) and notification.event not in events:
        return "filtered"
    quiet = config.notifications.quiet_hours
    if (
        quiet
        and name not in ALWAYS_AUDIBLE
        and not settings.get("ignore_quiet_hours")
        and in_quiet_hours(quiet)
    ):
        return "quiet_hours"
    return ""


def send(
    notification: Notification,
    config: Any = None,
    *,
    only: str | None = None,
    force: bool = False,
    record: bool = True,
) -> list[str]:
    """Deliver ``notification`` to each selected notifier; return the names that failed.

    ``only`` restricts delivery to one notifier (selected in config or not); ``force`` skips the
    event filters and quiet hours (``ecc notify test``). Never raises.
    """
    try:
        if config is None:
            from ecc.runtime.config import view as fastconfig

            config = fastconfig.view()
        outcome = _deliver(_linked(notification, config), config, only, force)
    except Exception as exc:  # the caller's session must never suffer from notifications
        _warn(f"notifications could not be sent: {type(exc).__name__}: {exc}")
        return []
    if record:
        _record(notification, config, outcome)
    return [name for name, status in outcome.items() if status.startswith("failed")]


def _linked(notification: Notification, config: Any) -> Notification:
    """With ``web.base_url`` set, a notification about a session carries its page's link (in
    ``data["url"]`` and as the body's last line): where a person approves, answers or looks."""
    web = config.get("web") if hasattr(config, "get") else getattr(config, "web", None)
    base = getattr(web, "base_url", None) if web is not None else None
    if not base or not notification.session_id:
        return notification
    import dataclasses
    from urllib.parse import quote

    url = f"{base}/web/sessions/{quote(notification.session_id, safe='')}"
    return dataclasses.replace(
        notification,
        body=f"{notification.body}\nOpen: {url}",
        data={**notification.data, "url": url},
    )


def _deliver(
    notification: Notification, config: Any, only: str | None, force: bool
) -> dict[str, str]:
    outcome: dict[str, str] = {}
    if not force and notification.event not in config.notifications.events:
        return {"*": "filtered"}
    notifiers = _notifiers(config, only)
    if only is not None and not notifiers:
        return {only: "failed: no such notifier is installed"}
    threads: list[tuple[str, threading.Thread, float]] = []
    all_settings = config.notifications.settings
    for notifier in notifiers:
        name = notifier.name
        raw = all_settings.get(name, {}) if all_settings else {}
        settings = dict(raw.to_dict() if hasattr(raw, "to_dict") else raw)
        why_not = "" if force else _gate(name, settings, notification, config)
        if why_not:
            outcome[name] = why_not
            continue
        outcome[name] = "failed: timed out"

        def run(name: str = name, notifier: Implementation = notifier, settings=settings):
            try:
                notifier(notification=notification, settings=settings)
                outcome[name] = "sent"
            except Exception as exc:  # one notifier must not stop the others
                outcome[name] = f"failed: {type(exc).__name__}: {exc}"

        thread = threading.Thread(target=run, name=f"ecc-notify-{name}", daemon=True)
        thread.start()
        deadline = float(settings.get("deadline", DEFAULT_DEADLINE_SECS))
        threads.append((name, thread, time.monotonic() + deadline))
    for _name, thread, deadline in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    for name, status in outcome.items():
        if status.startswith("failed"):
            _warn(f"notifier {name!r} {status}")
    return outcome


def _record(notification: Notification, config: Any, outcome: dict[str, str]) -> None:
    try:
        from ecc.store.open import open_store

        store = open_store(config=config)
        try:
            store.record_notification(
                event=notification.event,
                session_id=notification.session_id,
                title=notification.title,
                body=notification.body,
                data={**notification.data, "delivery": outcome},
            )
        finally:
            store.close()
    except Exception as exc:
        _warn(f"could not record the notification: {type(exc).__name__}: {exc}")


def _warn(message: str) -> None:
    if logging.getLogger().handlers:  # the runner and daemon log to their files
        log.warning(message)
    else:  # a CLI process: stderr is the log
        print(f"Warning: {message}", file=sys.stderr)
