"""The console-script entry point: a command line to its fast path, or to click.

Agents' hooks call ``ecc`` on every tool call, a bare ``ecc --version`` is how wrappers probe
for it, and agents start sessions and recall memory at the start of every task: the plain forms
of those command lines are answered by :mod:`ecc.cli.fast` without importing click. Each fast
path returns None for a form it does not handle, and the command line goes to the click app
(:mod:`ecc.cli.app`), which reads the same option declarations (:mod:`ecc.cli.options`).
"""

from __future__ import annotations

import sys


def main() -> None:
    args = _peel_log_options(sys.argv[1:])
    if args == ["--version"]:
        from ecc import VERSION_TEXT

        sys.stdout.write(VERSION_TEXT + "\n")
        return
    if args[:1] == ["hook"]:  # before every agent tool call
        from ecc.cli.fast.hook import main as hook_main

        status = hook_main(args[1:])
        if status is not None:
            _quick_exit(status)  # the store is closed and the answer written
    if args[:1] in (["run"], ["start"], ["run-session"]):  # starting sessions and runners
        from ecc.cli.fast.run import main as run_main

        status = run_main(args)
        if status is not None:
            sys.exit(status)
    if args[:2] == ["memory", "search"]:  # recall at the start of every task
        from ecc.cli.fast.search import main as search_main

        status = search_main(args[2:])
        if status is not None:
            _quick_exit(status)
    from ecc.cli.app import main as cli_main

    cli_main()


def _peel_log_options(args: list[str]) -> list[str]:
    """Leading ``-v``/``-vv``/``--verbose``/``--log-level LEVEL``, moved to ``ECC_LOG_LEVEL``
    (which the click app reads as the same options) so the fast paths still answer."""
    import os

    verbose, level, index = 0, None, 0
    while index < len(args):
        arg = args[index]
        if arg == "--verbose" or (arg.startswith("-v") and set(arg[1:]) == {"v"}):
            verbose += 1 if arg == "--verbose" else len(arg) - 1
        elif arg == "--log-level" and index + 1 < len(args) and _level(args[index + 1]):
            level, index = args[index + 1].lower(), index + 1
        elif arg.startswith("--log-level=") and _level(arg.partition("=")[2]):
            level = arg.partition("=")[2].lower()
        else:
            break
        index += 1
    if index == 0:
        return args
    os.environ["ECC_LOG_LEVEL"] = level or ("debug" if verbose > 1 else "info")
    return args[index:]


def _level(name: str) -> bool:
    return name.lower() in ("debug", "info", "warning", "error")


def _quick_exit(status: int) -> None:
    """End a finished hot-path command without the interpreter's teardown.

    Freeing every module's objects at exit costs 5-10 ms, a tenth of a warm memory search; the
    command has already closed what it opened (index connections, directory descriptors), so
    only the standard streams need flushing.
    """
    import os

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader went away: as click, end quietly with status 1
        status = status or 1
    os._exit(status)
