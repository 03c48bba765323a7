"""The options of the commands that serve HTTP (`ecc remote serve`, `ecc web`), once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click


def server_options(*, insecure: bool) -> Callable[[Any], Any]:
    """Decorate a serving command with ``--host``, ``--port``, ``--token-file``, TLS, the
    connection cap and the log level; ``insecure`` adds ``--insecure`` (plain HTTP off
    loopback), which ``ecc web`` never offers: its cookie would travel in clear."""

    def decorate(function: Any) -> Any:
        options = [
            click.option(
                "--host", default="127.0.0.1", show_default=True, help="Address to listen on."
            ),
            click.option(
                "--port",
                type=click.IntRange(0, 65535),
                default=8787,
                show_default=True,
                help="0: any free.",
            ),
            click.option(
                "--token-file",
                type=click.Path(dir_okay=False, path_type=Path),
                help="File of accepted tokens, one a line (default: $ECC_REMOTE_TOKEN, "
                "$ECC_REMOTE_TOKEN_FILE, then the file `ecc remote token` made).",
            ),
            click.option(
                "--tls-cert", type=click.Path(dir_okay=False, path_type=Path), help="PEM cert."
            ),
            click.option(
                "--tls-key", type=click.Path(dir_okay=False, path_type=Path), help="PEM key."
            ),
            *(
                [
                    click.option(
                        "--insecure",
                        is_flag=True,
                        help="Allow plain HTTP on a non-loopback address (warns).",
                    )
                ]
                if insecure
                else []
            ),
            click.option(
                "--max-connections",
                type=click.IntRange(min=1),
                default=64,
                show_default=True,
                help="Connections beyond this get 503.",
            ),
            click.option(
                "--log-level",
                type=click.Choice(["debug", "info", "warning", "error"]),
                default="info",
                show_default=True,
            ),
        ]
        for option in reversed(options):  # click lists them in the order written here
            function = option(function)
        return function

    return decorate
