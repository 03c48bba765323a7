"""The start-up cache: derived JSON that lets the hot paths skip work a full start would do.

``ecc hook``, ``ecc memory search``, ``ecc run -d`` and the session runner each start a fresh
interpreter. Validating the config (pydantic), scanning entry points (stevedore) and importing
every plugin cost more than their own work, so each result is kept here once computed: the
validated config view (``config``), the entry-point list (``plugins``) and which plugin modules
implement the hooks a hot path calls (``hook``). Each file is named by a hash of its ``key``
(what it was computed from) and holds that key, so a changed input simply misses. Deleting the
folder changes nothing but speed; an unwritable one only costs speed.
"""

from __future__ import annotations

import json
import os

from ecc.runtime import paths

TYPE_CHECKING = False  # typing stays unimported on the hot paths
if TYPE_CHECKING:
    from typing import Any


def location(kind: str, key: str) -> str:
    """Where the entry of ``kind`` computed from ``key`` lives (text: pathlib stays unimported)."""
    return os.path.join(paths.directory("cache"), kind, f"{paths.sha256_hex(key)[:24]}.json")


def read(kind: str, key: str) -> dict[str, Any] | None:
    """The entry stored for exactly ``key``, or None (missing, unreadable, another key)."""
    try:
        with open(location(kind, key), encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("key") != key:
        return None
    return data


def write(kind: str, key: str, data: dict[str, Any]) -> None:
    """Store ``data`` for ``key`` atomically (a reader sees the old entry or the new one)."""
    target = location(kind, key)
    try:
        folder, name = os.path.split(target)
        paths.ensure_private_dir(folder)
        tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(json.dumps({**data, "key": key}))
        os.replace(tmp, target)
    except OSError:
        pass  # a read-only cache costs only speed
