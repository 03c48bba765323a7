"""``ecc web``: the web pages (and the HTTP API) on 127.0.0.1, with a one-time sign-in link."""

from __future__ import annotations

from pathlib import Path

import click

from ecc.cli.serving import server_options


@click.command("web")
@server_options(insecure=False)
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
