"""Asking the tree watcher (:mod:`ecc.runtime.treewatch`, run by ``ecc daemon``) for change tokens.

A token names one uninterrupted stretch of watching a directory tree plus the number of changes
seen in it so far. The same token twice means nothing under that tree changed in between, as far
as inotify can tell; anything else (no watcher, a refused or odd reply, another identity for the
root) is ``None`` and the caller walks the tree as it would without a watcher.

This runs on the ``ecc memory search`` hot path: it uses ``_socket`` (the ``socket`` module
imports ``enum`` and costs ~10 ms) and answers within :data:`TIMEOUT` or not at all.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

TIMEOUT = 0.5  # a busy daemon costs at most this, then the walk
MAX_REPLY = 1 << 16
MAX_ROOTS = 8
PROTOCOL = 1


def socket_path(cache_dir: Path) -> Path:
    """Where the watcher of ``cache_dir``'s indexes listens (private: the cache dir is 0700)."""
    return cache_dir / "memory-index" / "watch.sock"


def tokens(cache_dir: Path, roots: list[tuple[str, int, int]]) -> list[str | None]:
    """One token (or None) for each ``(path, st_dev, st_ino)`` root, in one round trip."""
    none: list[str | None] = [None] * len(roots)
    if not roots or len(roots) > MAX_ROOTS:
        return none
    try:
        reply = _ask(str(socket_path(cache_dir)), [path for path, _, _ in roots])
    except (OSError, ValueError):
        return none
    if not isinstance(reply, dict) or reply.get("v") != PROTOCOL:
        return none
    answers = reply.get("roots")
    if not isinstance(answers, list) or len(answers) != len(roots):
        return none
    result = none[:]
    for at, ((_path, dev, ino), answer) in enumerate(zip(roots, answers, strict=True)):
        if (
            isinstance(answer, list)
            and len(answer) == 4
            and isinstance(answer[0], str)
            and all(type(part) is int for part in answer[1:])
            and answer[2:] == [dev, ino]  # the tree watched is the one this process opened
        ):
            result[at] = f"{answer[0]}:{answer[1]}:{dev}:{ino}"
    return result


def _ask(path: str, roots: list[str]) -> object:
    import _socket

    if len(os.fsencode(path)) >= 108 or not hasattr(_socket, "SO_PEERCRED"):
        return None  # no room in sun_path; not Linux (no watcher there)
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(TIMEOUT)
        sock.connect(path)
        peer = sock.getsockopt(_socket.SOL_SOCKET, _socket.SO_PEERCRED, 12)
        if int.from_bytes(peer[4:8], sys.byteorder) != os.getuid():  # struct ucred: pid, uid
            return None  # someone else's listener in our cache dir: never trusted
        sock.sendall(json.dumps({"v": PROTOCOL, "roots": roots}).encode() + b"\n")
        data = b""
        while not data.endswith(b"\n"):
            chunk = sock.recv(MAX_REPLY)
            if not chunk or len(data) + len(chunk) > MAX_REPLY:
                return None
            data += chunk
    finally:
        sock.close()
    return json.loads(data)
