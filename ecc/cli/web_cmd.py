"""``ecc web``: the web pages (and the HTTP API) on 127.0.0.1, with a one-time sign-in link."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("web")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8787, show_default=True, help="0: any free."
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="File of accepted tokens (default: as `ecc remote serve`).",
)
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), help="PEM cert.")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), help="PEM key.")
@click.option(
    "--max-connections", type=click.IntRange(min=1), default=64, show_default=True,
    help="Requests in progress beyond this get 503.",
)  # fmt: skip
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
)
def web_command(
    host: str,
    port: int,
    token_file: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    max_connections: int,
    log_level: str,
) -> None:
    """Serve the web pages (sessions, approvals, follow-ups) until SIGINT/SIGTERM.

    Prints a one-time sign-in link for you; others sign in with the API token. Any address
    but loopback needs --tls-cert and --tls-key. The same pages are under `ecc remote serve`
    at /web/.
    """
    from ecc.web.serve import serve_web

    serve_web(
        host=host,
        port=port,
        token_file=token_file,
        tls_cert=tls_cert,
        tls_key=tls_key,
        max_connections=max_connections,
        log_level=log_level,
    )
