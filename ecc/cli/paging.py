"""Long output for a person at a terminal: colour (unless ``NO_COLOR``) and a pager.

In a pipe or a file the text stays plain and unpaged, so scripts read what git would print.
The pager is ``$PAGER`` (click's choice: else ``less``), with ``LESS=FRX`` as git sets it when
unset: quit when the text fits one screen, pass colours through, leave the screen as it was.
"""

from __future__ import annotations

import os
import sys

from ecc.runtime.terminal import sanitize

RESET = "\x1b[0m"
_DIFF_COLOURS = (
    ("+++", "\x1b[1m"),
    ("---", "\x1b[1m"),
    ("diff --git", "\x1b[1m"),
    ("index ", "\x1b[1m"),
    ("@@", "\x1b[36m"),
    ("+", "\x1b[32m"),
    ("-", "\x1b[31m"),
)


def colour_wanted(stream: object = None) -> bool:
    """Colour for a terminal, unless ``NO_COLOR`` is set to anything (https://no-color.org)."""
    target = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR"):
        return False
    isatty = getattr(target, "isatty", None)
    return bool(isatty and isatty())


def colour_diff_line(line: str) -> str:
    """One (already sanitised) line of a unified diff, coloured as git colours it."""
    for prefix, colour in _DIFF_COLOURS:
        if line.startswith(prefix):
            return f"{colour}{line}{RESET}"
    return line


def show_diff(text: str, *, pager: bool = True) -> None:
    """Print a diff of untrusted text: sanitised line by line, then coloured and paged on a
    terminal."""
    import click

    lines = [sanitize(line) for line in text.splitlines()]
    if not sys.stdout.isatty():
        for line in lines:
            click.echo(line)
        return
    colour = colour_wanted()
    if colour:
        lines = [colour_diff_line(line) for line in lines]
    body = "".join(line + "\n" for line in lines)
    if pager and lines:
        os.environ.setdefault("LESS", "FRX")
        click.echo_via_pager(body, color=colour)
    else:
        click.echo(body, nl=False, color=colour)
