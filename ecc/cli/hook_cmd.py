"""``ecc hook``: called by a harness's own hook on every tool call (hidden from ``--help``).

Reads the harness's JSON payload on stdin and answers in that harness's protocol (exit code,
stdout, stderr); see :mod:`ecc.observability.toolhook`. It never fails the harness: an internal
error or a payload over ``risk.max_input_bytes`` allows the call and is logged, unless
``risk.fail_closed = true``; a config that does not load never weakens that
(:mod:`ecc.observability.failsafe`). The plain form is answered without click
(:mod:`ecc.cli.fast.hook`), from the same option table.
"""

from __future__ import annotations

import sys

import click

from ecc.cli.options import HOOK, click_options


@click.command("hook", hidden=True)
@click_options(HOOK)
def hook_command(harness: str, event: str, managed: bool) -> None:
    """Score one tool call from a harness hook payload on stdin; answer allow, ask or deny."""
    from ecc.cli.fast.hook import write_response
    from ecc.observability.toolhook import run

    raw = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    sys.exit(write_response(run(harness, event, raw, managed=managed)))
