"""The console-script entry point, kept apart from ``ecc.cli`` so ``--version`` imports nothing.

Agents' hooks call ``ecc`` on every tool call; a bare ``ecc --version`` is also how wrappers
probe for it. Both paths must cost little more than the interpreter's own start-up. The plain
forms of ``ecc run -d``/``ecc start`` and the runner's ``ecc run-session`` skip click as well
(:mod:`ecc.runcall`), and so does the plain form of ``ecc memory search``
(:mod:`ecc.searchcall`); every other form goes to click.
"""

from __future__ import annotations

import sys


def main() -> None:
    if sys.argv[1:] == ["--version"]:
        from ecc import __version__

        sys.stdout.write(f"ecc {__version__}\n")
        return
    if sys.argv[1:2] == ["hook"]:  # before every agent tool call: skip click for the plain form
        from ecc.hookcall import main as hook_main

        status = hook_main(sys.argv[2:])
        if status is not None:
            sys.exit(status)
    if sys.argv[1:2] in (["run"], ["start"], ["run-session"]):  # starting sessions and runners
        from ecc.runcall import main as run_main

        status = run_main(sys.argv[1:])
        if status is not None:
            sys.exit(status)
    if sys.argv[1:3] == ["memory", "search"]:  # recall at the start of every task: no click
        from ecc.searchcall import main as search_main

        status = search_main(sys.argv[3:])
        if status is not None:
            sys.exit(status)
    from ecc.cli import main as cli_main

    cli_main()
