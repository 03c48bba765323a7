"""Process identity, liveness and signalling for sessions on this machine: the one module that
asks the operating system about processes (through psutil, so it works on macOS as on Linux).

A pid alone is not an identity: it is reused. Each recorded pid comes with a token (the
process's start time, as psutil reports it) and a process is "the same" only when both match.
A zombie counts as dead. psutil is imported on first use (about 10 ms): ``ecc hook`` and
``ecc memory search`` never touch this module's process calls.
"""

from __future__ import annotations

import os
import signal
import sys
import time
from functools import cache
from pathlib import Path

TYPE_CHECKING = False  # without importing typing
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

_GONE = ("zombie", "dead")  # psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD
_ENDING = (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGHUP - 1))


@cache
def hostname() -> str:
    # what socket.gethostname() returns (gethostname(2) is the kernel's node name), without
    # importing socket on every command that touches sessions
    return os.uname().nodename


def _process(pid: int | None) -> Any:
    """The psutil process ``pid``, or None when there is none (or it cannot be seen)."""
    if not pid or pid <= 0:
        return None
    import psutil

    try:
        return psutil.Process(pid)
    except (psutil.NoSuchProcess, psutil.AccessDenied, ValueError):
        return None


def _start_time(process: Any) -> float | None:
    import psutil

    try:
        return float(process.create_time())
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return None


def token(pid: int) -> str | None:
    """The start time of ``pid`` as text (None when unknown or gone)."""
    process = _process(pid)
    started = _start_time(process) if process is not None else None
    return None if started is None else repr(started)


def _matches(process: Any, expected: str) -> bool:
    started = _start_time(process)
    if started is None:
        return False
    if expected.isdigit():  # recorded before psutil: clock ticks since boot (Linux)
        import psutil

        ticks = (started - psutil.boot_time()) * os.sysconf("SC_CLK_TCK")
        return round(ticks) == int(expected)
    return repr(started) == expected


def _running(process: Any) -> bool:
    import psutil

    try:
        return process.status() not in _GONE
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False


def alive(pid: int | None, expected_token: str | None = None) -> bool:
    """Is ``pid`` a live (non-zombie) process, and the one we recorded?"""
    process = _process(pid)
    if process is None:
        return False
    if not _running(process):
        return False
    return expected_token is None or _matches(process, expected_token)


def same_process(pid: int | None, expected_token: str | None) -> bool:
    """Is ``pid`` (live or a zombie not yet reaped) the process recorded with the token?"""
    process = _process(pid)
    return process is not None and expected_token is not None and _matches(process, expected_token)


def _members(pgid: int) -> Iterable[Any]:
    """The live (non-zombie) processes of group ``pgid``."""
    import psutil

    for process in psutil.process_iter():
        try:
            if os.getpgid(process.pid) == pgid and _running(process):
                yield process
        except (OSError, psutil.Error):
            continue


def group_alive(pgid: int | None) -> bool:
    """Does any live (non-zombie) process remain in process group ``pgid``?"""
    if not pgid or pgid <= 1:
        return False
    try:
        os.killpg(pgid, 0)  # nothing at all in the group: no need to look further
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return next(iter(_members(pgid)), None) is not None


def signal_group(pgid: int | None, sig: int) -> bool:
    if not pgid or pgid <= 1:
        return False
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def leader_alive(pgid: int | None) -> bool:
    """Is the process ``pgid`` alive and still the leader of process group ``pgid``?

    A session's group leader is its supervisor (:mod:`ecc.sessions.supervisor`)."""
    process = _process(pgid) if pgid and pgid > 1 else None
    if process is None or not _running(process):
        return False
    try:
        return os.getpgid(process.pid) == pgid
    except OSError:
        return False


def children(pid: int) -> list[int]:
    """The pids of ``pid``'s direct children ([] when it is gone)."""
    import psutil

    process = _process(pid)
    try:
        return [child.pid for child in process.children()] if process is not None else []
    except psutil.Error:
        return []


def signal_pending(pid: int) -> bool:
    """Does (stopped) process ``pid`` hold a SIGTERM, SIGINT or SIGHUP it has not acted on?

    A process that is gone has nothing left to wait for: True. Only Linux tells (procfs); where
    it cannot be known the answer is True, so a caller waiting for it goes on at once."""
    if not sys.platform.startswith("linux"):
        return True
    pending = 0
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(("SigPnd:", "ShdPnd:")):
                    pending |= int(line.split()[1], 16)
    except (OSError, ValueError):
        return True
    return bool(pending & _ENDING)


def group_holds_open(pgid: int, files: Iterable[Path]) -> bool:
    """Does a live process of group ``pgid`` still have one of ``files`` open?"""
    import psutil

    wanted = set()
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            continue
        wanted.add((info.st_dev, info.st_ino))
    if not wanted or pgid <= 1:
        return False
    for process in _members(pgid):
        try:
            opened = process.open_files()
        except psutil.AccessDenied:
            return True  # cannot look: it may hold them
        except psutil.Error:
            continue
        for handle in opened:
            try:
                info = os.stat(handle.path)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in wanted:
                return True
    return False


def ask_group_to_end(pgid: int | None) -> bool:
    """One SIGTERM for every process of a session's group: through its supervisor when it
    still leads the group (it forwards the signal to the group once, however often asked),
    else to the group directly. False when nothing was there to signal."""
    if not pgid or pgid <= 1:
        return False
    if leader_alive(pgid):
        try:
            os.kill(pgid, signal.SIGTERM)
            return True
        except ProcessLookupError:
            pass  # it has just exited: what is left gets the signal directly
        except PermissionError:
            return False
    return signal_group(pgid, signal.SIGTERM)


def signal_process(pid: int | None, sig: int) -> bool:
    """Send ``sig`` to the one process ``pid``; False when it is not there to receive it."""
    if not pid or pid <= 0:
        return False
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def terminate_group(pgid: int, grace: float, poll: float = 0.05) -> str:
    """SIGTERM the group once (:func:`ask_group_to_end`), wait up to ``grace`` seconds for it to
    empty, then SIGKILL it.

    Returns "" when the group was already gone, "SIGTERM" when it ended in time, else "SIGKILL".
    The group is continued (SIGCONT) after the SIGTERM: a harness paused by back-pressure
    could not act on it otherwise, and would be killed at the end of its grace.
    """
    if not ask_group_to_end(pgid):
        return ""
    signal_group(pgid, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return "SIGTERM"
        time.sleep(poll)
    signal_group(pgid, signal.SIGKILL)
    return "SIGKILL"


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"
