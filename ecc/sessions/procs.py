"""Process identity and signalling for sessions on this machine.

A pid alone is not an identity: it is reused. Each recorded pid comes with a token (the process
start time from ``/proc/<pid>/stat``) and a process is "the same" only when both match. A zombie
counts as dead.
"""

from __future__ import annotations

import os
import signal
import time
from functools import cache


@cache
def hostname() -> str:
    # what socket.gethostname() returns (gethostname(2) is the kernel's node name), without
    # importing socket on every command that touches sessions
    return os.uname().nodename


def _stat(pid: int) -> list[str] | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read().decode("ascii", "replace")
    except OSError:
        return None
    # the command name (field 2) may contain spaces and parentheses: split after the last ')'
    return raw[raw.rfind(")") + 2 :].split()


def token(pid: int) -> str | None:
    """The start time of ``pid`` in clock ticks since boot (None when unknown or gone)."""
    fields = _stat(pid)
    return fields[19] if fields and len(fields) > 19 else None


def alive(pid: int | None, expected_token: str | None = None) -> bool:
    """Is ``pid`` a live (non-zombie) process, and the one we recorded?"""
    if not pid or pid <= 0:
        return False
    fields = _stat(pid)
    if fields is None:
        if not os.path.isdir("/proc"):  # no procfs: fall back to kill(0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return False
            except PermissionError:
                return True
            return True
        return False
    if fields[0] in ("Z", "X"):
        return False
    return expected_token is None or fields[19] == expected_token


def group_alive(pgid: int | None) -> bool:
    """Does any live (non-zombie) process remain in process group ``pgid``?"""
    if not pgid or pgid <= 1:
        return False
    if os.path.isdir("/proc"):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                fields = _stat(int(entry))
                if fields and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in "ZX":
                    return True
        return False
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


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
    fields = _stat(pgid) if pgid and pgid > 1 else None
    return bool(
        fields and len(fields) > 2 and fields[0] not in ("Z", "X") and fields[2] == str(pgid)
    )


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
