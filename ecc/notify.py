"""Dispatch of events to notifier plugins.

The core builds a :class:`ecc.types.Notification` and calls :func:`send`; every notifier selected
in ``[notifications].notifiers`` receives it through the ``ecc_notify`` hook. A notifier that
raises is reported on stderr and does not stop the others; ``send`` never raises.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ecc.config import Config
    from ecc.types import Notification


def send(notification: Notification, config: Config | None = None) -> list[str]:
    """Deliver ``notification`` to each selected notifier; return the names that failed."""
    from ecc.config import get_config
    from ecc.plugins import get_plugin_manager

    config = config or get_config()
    if notification.event not in config.notifications.events:
        return []
    pm = get_plugin_manager(config)
    failed: list[str] = []
    for impl in pm.hook.ecc_notify.get_hookimpls():
        name = impl.plugin_name.partition(":")[2]
        settings = config.notifications.settings.get(name, {})
        try:
            impl.function(notification=notification, settings=settings)
        except Exception as exc:  # one notifier must not stop the others
            failed.append(name)
            print(f"Warning: notifier {name!r} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    return failed
