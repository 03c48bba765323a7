"""Logging for every ecc process: one level for the command line, files that rotate.

The level comes from the global ``-v`` / ``-vv`` / ``--log-level LEVEL`` options, which put it in
``ECC_LOG_LEVEL`` so the processes a command starts (a session's runner, the daemon's) log at
the same level. Without it a command shows warnings, and the daemon and runners info.

Long-lived logs (``<state dir>/logs/daemon.log``, ``<id>.runner.log``) rotate at
:data:`MAX_BYTES`, keeping :data:`BACKUPS` older files (``.1`` the newest). A file already over
the size when a process starts is rotated first, so a runner resumed many times stays bounded.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # typing stays unimported in runners
if TYPE_CHECKING:
    from typing import Any

MAX_BYTES = 5 * 1024 * 1024
BACKUPS = 3
ENV = "ECC_LOG_LEVEL"
LEVELS = ("debug", "info", "warning", "error")
FORMAT = "%(asctime)s %(name)s %(levelname)s %(message)s"


def level_from_flags(verbose: int, level: str | None) -> str | None:
    """The level the options ask for: ``--log-level`` wins; ``-v`` info, ``-vv`` debug."""
    if level:
        return level.lower()
    if verbose:
        return "debug" if verbose > 1 else "info"
    return None


def level_from_env() -> str | None:
    """``ECC_LOG_LEVEL`` when it names a level (a parent's ``-v``/``--log-level``)."""
    name = os.environ.get(ENV, "").lower()
    return name if name in LEVELS else None


def set_level(level: str) -> None:
    """Make ``level`` this process's and its children's, and show it on stderr now."""
    os.environ[ENV] = level
    logging.getLogger("ecc").setLevel(level.upper())
    _to_stderr()


def _to_stderr() -> None:
    """One stderr handler, on the root logger, unless the root already has handlers (as
    :func:`logging.basicConfig`): a server's own configuration then keeps its format."""
    root = logging.getLogger()
    if not root.handlers:
        handler = logging.StreamHandler()
        handler.ecc_stderr = True  # type: ignore[attr-defined]
        handler.setFormatter(logging.Formatter(FORMAT))
        root.addHandler(handler)


def chosen_level(default: str) -> int:
    """The level from ``ECC_LOG_LEVEL`` (an unknown name: ``default``)."""
    name = os.environ.get(ENV, "").lower()
    return getattr(logging, (name if name in LEVELS else default).upper())


class RotatingLog(logging.FileHandler):
    """A private log file rotated by size (``path.1`` the newest backup), as the standard
    library's RotatingFileHandler does, without importing ``logging.handlers`` (and socket,
    pickle, queue) into every runner. ``follow_stderr``: fd 2 moves to each new file too, so a
    traceback written straight to stderr lands beside the log lines."""

    def __init__(self, path: Path, follow_stderr: bool = False) -> None:
        self.follow_stderr = follow_stderr
        super().__init__(path, encoding="utf-8")
        if self._size() >= MAX_BYTES:
            self.rotate()
        else:
            self._point_stderr()

    def _open(self) -> Any:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8")

    def _size(self) -> int:
        return os.fstat(self.stream.fileno()).st_size if self.stream is not None else 0

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if self._size() >= MAX_BYTES:
                self.rotate()
        except OSError:
            pass  # a log that cannot rotate still takes the line
        super().emit(record)

    def rotate(self) -> None:
        """Shift ``path.N`` to ``path.N+1`` (dropping the oldest), ``path`` to ``path.1``."""
        if self.stream is not None:
            self.stream.close()
            self.stream = None
        base = self.baseFilename
        for number in range(BACKUPS - 1, 0, -1):
            if os.path.exists(f"{base}.{number}"):
                os.replace(f"{base}.{number}", f"{base}.{number + 1}")
        if os.path.exists(base):
            os.replace(base, f"{base}.1")
        self.stream = self._open()
        self._point_stderr()

    def _point_stderr(self) -> None:
        if self.follow_stderr and self.stream is not None:
            sys.stderr.flush()
            os.dup2(self.stream.fileno(), 2)


def to_file(path: Path, *, default: str = "info", stderr: bool = False) -> logging.Logger:
    """Send ecc's log records to ``path`` (rotating) and, with ``stderr``, to stderr too."""
    logger = logging.getLogger("ecc")
    logger.setLevel(chosen_level(default))
    formatter = logging.Formatter(FORMAT)
    handler = RotatingLog(path)
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    if stderr:
        _to_stderr()
    return logger


def for_runner(path: Path) -> None:
    """A runner's logging: to its rotating log when its stderr is that file (the local
    executor starts it so), else to stderr as before."""
    try:
        same = os.path.samestat(os.fstat(2), os.stat(path))
    except OSError:
        same = False
    if not same:
        logging.basicConfig(level=chosen_level("info"), format=FORMAT)
        return
    handler = RotatingLog(path, follow_stderr=True)
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    for other in [h for h in root.handlers if getattr(h, "ecc_stderr", False)]:
        root.removeHandler(other)  # stderr is this very file: each line once
    root.setLevel(chosen_level("info"))
    root.addHandler(handler)
