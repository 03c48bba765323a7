"""The session's process-group leader: the group never outlives its runner.

The runner starts ``python -I -S supervisor.py PARENT_PID GRACE -- ARGV…`` as a new process group
(the group id is the supervisor's pid). The supervisor asks the kernel for ``PR_SET_PDEATHSIG``
(SIGTERM when its parent, the runner, dies for any reason: SIGKILL, OOM, a Celery pool child
killed), then runs the harness as its child in the same group and waits:

* the harness exits: the supervisor exits with the same status (a signal, SIGKILL included,
  is re-raised on itself, with no core file of its own), so the runner sees exactly what the
  harness did;
* SIGTERM/SIGINT/SIGHUP arrive (the runner's stop, or the runner's death): one SIGTERM to the
  whole group, however many arrive. Whoever asked for the stop owns its grace: while the runner
  lives, the runner waits the requested grace and sends the SIGKILL; once the runner is gone
  (the death signal, or a stop that finds it gone), the supervisor waits ``GRACE`` seconds
  (``stop_grace_secs``) and sends SIGKILL to the whole group itself included.

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
    stopping: list[bool] = []  # the group has had its one SIGTERM
    deadline: list[float] = []  # when we SIGKILL the group: set once the runner is gone

    def orphaned() -> bool:
        return os.getppid() != parent

    def on_signal(signum: int, frame: object) -> None:
        if not stopping:
            stopping.append(True)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)  # our own killpg must not recurse
            try:
                os.killpg(group, signal.SIGTERM)
            except OSError:
                pass
        if not deadline and orphaned():
            deadline.append(time.monotonic() + grace)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    if orphaned():  # the runner died before the death signal was armed
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
        if stopping and not deadline and orphaned():  # the runner died during its stop
            deadline.append(time.monotonic() + grace)
        if deadline and time.monotonic() >= deadline[0]:
            os.killpg(group, signal.SIGKILL)  # ends us too
        time.sleep(0.02)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        _die_by(number)
        return 128 + number  # only for a signal whose default action does not end a process
    return os.WEXITSTATUS(status)


def _die_by(number: int) -> None:
    """End this process by signal ``number``, as the harness ended, without a core file."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the harness's core is the one
    except (ImportError, OSError, ValueError):
        pass
    if number not in (signal.SIGKILL, signal.SIGSTOP):  # neither can be caught nor reset
        try:
            signal.signal(number, signal.SIG_DFL)
        except (OSError, ValueError):
            pass
    try:
        os.kill(os.getpid(), number)
    except OSError:
        return
    time.sleep(1)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
