"""``ecc hook``: called by a harness's own hook on every tool call (hidden from ``--help``).

Reads the harness's JSON payload on stdin and answers in that harness's protocol (exit code,
stdout, stderr); see :mod:`ecc.observability.toolhook`. It never fails the harness: an internal error allows
the call and is logged, unless ``risk.fail_closed = true``.
"""

from __future__ import annotations

import sys

import click


@click.command("hook", hidden=True)
@click.option("--harness", required=True, help="The harness calling: claude, codex, gemini...")
@click.option("--event", default="", help="Event name when the payload does not carry one.")
def hook_command(harness: str, event: str) -> None:
    """Score one tool call from a harness hook payload on stdin; answer allow, ask or deny."""
    from ecc.observability.toolhook import run

    raw = sys.stdin.buffer.read() if not sys.stdin.isatty() else b""
    response = run(harness, event, raw)
    if response.stdout:
        sys.stdout.write(response.stdout)
        sys.stdout.flush()
    if response.stderr:
        sys.stderr.write(response.stderr)
        sys.stderr.flush()
    sys.exit(response.exit_code)
