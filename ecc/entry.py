"""The console-script entry point, kept apart from ``ecc.cli`` so ``--version`` imports nothing.

Agents' hooks call ``ecc`` on every tool call; a bare ``ecc --version`` is also how wrappers
probe for it. Both paths must cost little more than the interpreter's own start-up. The plain
forms of ``ecc run -d``/``ecc start`` and the runner's ``ecc run-session`` skip click as well
(:mod:`ecc.cli.fast.run`), and so does the plain form of ``ecc memory search``
(:mod:`ecc.cli.fast.search`); every other form goes to click.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from ecc import __version__

        sys.stdout.write(f"ecc {__version__}\n")
        return
    if sys.argv[1:2] == ["hook"]:  # before every agent tool call: skip click for the plain form
        from ecc.observability.toolhook import main as hook_main

        status = hook_main(sys.argv[2:])
        if status is not None:
            sys.exit(status)
    if sys.argv[1:2] in (["run"], ["start"], ["run-session"]):  # starting sessions and runners
        from ecc.cli.fast.run import main as run_main

        status = run_main(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if sys.argv[1:3] == ["memory", "search"]:  # recall at the start of every task: no click
        from ecc.cli.fast.search import main as search_main

        status = search_main(sys.argv[3:])
        if status is not None:
            _quick_exit(status)
    from ecc.cli.app import main as cli_main

    cli_main()


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
