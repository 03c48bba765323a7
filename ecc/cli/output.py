"""Small helpers every command uses to print: JSON for machines, sanitised text for people."""

from __future__ import annotations

from typing import Any

import click

from ecc.runtime.terminal import json_text, sanitize


def emit_json(payload: Any) -> None:
    """Print ``payload`` as stable, 2-space indented JSON (never sanitised: JSON escapes it)."""
    click.echo(json_text(payload))


def say(text: object = "", *, err: bool = False) -> None:
    """Print one line of human output with control sequences neutralised."""
    click.echo(sanitize(text), err=err)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
