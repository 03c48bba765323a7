"""``ecc remote serve|token|add|list|remove``: the HTTP API for sessions, and its named servers."""

from __future__ import annotations

from pathlib import Path

import click

from ecc.cli.output import emit_json, json_option, say
from ecc.cli.serving import server_options


@click.group("remote")
def remote_group() -> None:
    """Serve or use the HTTP API for sessions.

    On the server: `ecc remote token`, set remote.allowed_roots, then `ecc remote serve`.
    On a client: `ecc remote add NAME URL --token-file F`, then `ecc run --remote NAME ...`,
    `ecc sessions --remote NAME`, `ecc logs --remote NAME -f ID`, `ecc stop --remote NAME ID`.
    """


@remote_group.command("serve")
@server_options(insecure=True)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Once listening, print one JSON line on stdout: the url and the server's pid.",
)
def serve_command(
    host: str,
    port: int,
    token_file: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
    max_connections: int,
    log_level: str,
    as_json: bool,
) -> None:
    """Serve the HTTP API (127.0.0.1:8787 by default) until SIGINT/SIGTERM.

    The token is never taken from the command line. Only repositories under
    remote.allowed_roots can be targeted.
    """
    import os

    from ecc.remote.server import serve

    def listening(app: object, url: str) -> None:
        if as_json:  # a script started with port 0 learns the port here
            emit_json({"url": url, "pid": os.getpid()}, indent=None)

    serve(
        host=host,
        port=port,
        token_file=token_file,
        tls_cert=tls_cert,
        tls_key=tls_key,
        insecure=insecure,
        max_connections=max_connections,
        log_level=log_level,
        on_listening=listening,
    )


@remote_group.command("token")
@click.option(
    "--file",
    "path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Where to write it (default: remote-token in the config dir).",
)
@click.option("--force", is_flag=True, help="Replace an existing token file.")
@json_option
def token_command(path: Path | None, force: bool, as_json: bool) -> None:
    """Create a random bearer token in a 0600 file (the token itself is never printed)."""
    from ecc.remote.tokens import create_token_file

    written = create_token_file(path, force=force)
    if as_json:
        emit_json({"token_file": str(written)})
    else:
        say(f"Token written to {written} (mode 0600).")
        say(
            "Copy that file to each client (mode 0600) and run: ecc remote add NAME URL "
            "--token-file FILE"
        )


@remote_group.command("add")
@click.argument("name")
@click.argument("url")
@click.option(
    "--token-file",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="File holding the server's token (mode 0600); only its path is stored.",
)
@click.option(
    "--ca-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="CA bundle to verify a server with a self-signed certificate.",
)
@json_option
def add_command(name: str, url: str, token_file: Path, ca_file: Path | None, as_json: bool) -> None:
    """Remember the server at URL as NAME (replaces an existing NAME)."""
    from ecc.remote import remotes

    remote = remotes.add(name, url, token_file, ca_file)
    if as_json:
        emit_json(remote.as_dict())
        return
    say(f"Remote {remote.name}: {remote.url}")
    if remote.url.startswith("http://"):
        from urllib.parse import urlsplit

        from ecc.remote.remotes import is_loopback

        if not is_loopback(urlsplit(remote.url).hostname or ""):
            say("Warning: plain HTTP to a non-loopback host sends the token unencrypted.", err=True)


@remote_group.command("list")
@json_option
def list_command(as_json: bool) -> None:
    """List the named remotes."""
    from ecc.remote import remotes

    found = remotes.load()
    if as_json:
        emit_json([r.as_dict() for r in found.values()])
        return
    if not found:
        say("No remotes (ecc remote add NAME URL --token-file F).")
        return
    for remote in found.values():
        say(f"{remote.name}  {remote.url}  token: {remote.token_file}")


@remote_group.command("remove")
@click.argument("name")
@json_option
def remove_command(name: str, as_json: bool) -> None:
    """Forget the remote NAME (its token file is left alone)."""
    from ecc.remote import remotes

    remotes.remove(name)
    if as_json:
        emit_json({"name": name, "removed": True})
    else:
        say(f"Remote {name} removed.")
