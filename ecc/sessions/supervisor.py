"""The session's process-group leader: the group never outlives its runner.

The runner starts ``python -I -S supervisor.py PARENT_PID GRACE -- ARGV…`` as a new process group
(the group id is the supervisor's pid). The supervisor asks the kernel for ``PR_SET_PDEATHSIG``
(SIGTERM when its parent, the runner, dies for any reason: SIGKILL, OOM, a Celery pool child
killed), then runs the harness as its child in the same group and waits:

* the harness exits: the supervisor exits with the same status (a signal is re-raised on
  itself), so the runner sees exactly what the harness did;
* SIGTERM/SIGINT/SIGHUP arrive (the runner's stop, or the runner's death): SIGTERM to the whole
  group, ``GRACE`` seconds, then SIGKILL to the whole group (itself included).

Standalone on purpose (stdlib only, run with ``-S``): it starts in a few milliseconds and imports
nothing of ecc. Linux only for the death signal; elsewhere it still leads and cleans the group.
"""

from __future__ import annotations

import os
import sys
import time

try:  # the C module under ``signal``: without site, ``signal``'s enums import enum, functools
    # and collections, which doubles this process's start-up CPU (typeshed has no stub for it)
    import _signal as signal  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - every CPython has it
    import signal

PR_SET_PDEATHSIG = 1


def _set_parent_death_signal() -> None:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def main(argv: list[str]) -> int:
    parent, grace, command = int(argv[1]), float(argv[2]), argv[4:]
    _set_parent_death_signal()
    group = os.getpgrp()
    deadline: list[float] = []

    def on_signal(signum: int, frame: object) -> None:
        if not deadline:
            deadline.append(time.monotonic() + grace)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # our own killpg must not recurse
            try:
                os.killpg(group, signal.SIGTERM)
            except OSError:
                pass

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    if os.getppid() != parent:  # the runner died before the death signal was armed
        on_signal(signal.SIGTERM, None)
    try:
        child = os.fork()
    except OSError as exc:
        print(f"ecc supervisor: cannot fork: {exc}", file=sys.stderr)
        return 127
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"ecc: cannot start {command[0]}: {exc.strerror or exc}", file=sys.stderr)
        os._exit(127)
    while True:
        try:
            pid, status = os.waitpid(child, os.WNOHANG)
        except ChildProcessError:
            return 1
        if pid == child:
            break
        if deadline and time.monotonic() >= deadline[0]:
            os.killpg(group, signal.SIGKILL)  # ends us too
        time.sleep(0.02)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        time.sleep(1)
        return 128 + number
    return os.WEXITSTATUS(status)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
