"""The ``log`` notifier: every event as one JSON line in ``<state dir>/notifications.jsonl``.

Always available (no desktop or network needed), so events are never lost silently; other
notifiers add delivery on top. ``[notifications.settings.log] path = "…"`` moves the file.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from ecc.contract.hookspecs import hookimpl
from ecc.contract.types import Notification
from ecc.runtime import paths


@hookimpl
def ecc_notify(notification: Notification, settings: dict[str, Any]) -> None:
    target = Path(settings.get("path") or paths.state_dir() / "notifications.jsonl")
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    record = {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "event": notification.event,
        "title": notification.title,
        "body": notification.body,
        "session_id": notification.session_id,
        "data": notification.data,
    }
    line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)
