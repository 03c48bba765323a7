"""``ecc remote serve``: uvicorn with the loopback rule, TLS, limits and timeouts.

* A non-loopback address is refused without TLS unless ``--insecure`` (then a warning).
* Slow clients: a request's headers must arrive within ``remote.read_timeout_secs`` of the
  connection (or of the previous response), and idle connections are capped per peer and in all
  (:mod:`ecc.remote.protocol`, since uvicorn has neither); the body has the same deadline
  (:class:`ecc.remote.guard.Guard`); idle keep-alive connections close after
  ``KEEP_ALIVE_SECS``; headers are capped at ``MAX_HEADER_BYTES``; requests in progress beyond
  ``--max-connections`` get 503 from the guard (health aside). uvicorn's own
  ``limit_concurrency`` is not used: it counts idle connections, so a few dozen sockets that
  send nothing would make it answer 503 to everyone.
* The listening socket is opened here (``--port 0`` picks a free port), and the address is
  printed on stderr once the server accepts connections.
"""

from __future__ import annotations

import logging
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError
from ecc.remote.remotes import is_loopback

KEEP_ALIVE_SECS = 5
MAX_HEADER_BYTES = 16 * 1024
GRACEFUL_SHUTDOWN_SECS = 5
IDLE_PER_REQUEST = 4  # idle connections kept in all, per request that may be in progress

log = logging.getLogger("ecc.remote")


def check_bind(host: str, tls: bool, insecure: bool) -> str | None:
    """Refuse a plain-HTTP non-loopback bind unless ``insecure``; returns a warning or None."""
    if is_loopback(host) or tls:
        return None
    if not insecure:
        raise EccError(
            f"refusing to serve plain HTTP on non-loopback address {host}: "
            "pass --tls-cert and --tls-key, or --insecure to accept the risk"
        )
    return (
        f"WARNING: serving plain HTTP on {host}: tokens and task text cross the network "
        "unencrypted (--insecure)"
    )


def open_socket(host: str, port: int) -> socket.socket:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise EccError(f"cannot resolve {host}: {exc}") from None
    family, kind, proto, _, address = infos[0]
    # proto must be IPPROTO_TCP (not 0): asyncio sets TCP_NODELAY on accepted connections only
    # then, and without it every kept-alive response waits ~40 ms for a delayed ACK (Nagle)
    sock = socket.socket(family, kind, proto or socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise EccError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.set_inheritable(False)
    return sock


def serve(
    *,
    host: str,
    port: int,
    token_file: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    insecure: bool,
    max_connections: int,
    log_level: str = "info",
    on_listening: Callable[[Any, str], None] | None = None,
) -> None:
    """Serve until SIGINT/SIGTERM; ``on_listening(app, base_url)`` runs once connections are
    accepted (``ecc web`` prints its sign-in link there)."""
    from ecc.runtime.extras import require_extra

    require_extra("remote", "ecc remote serve", "fastapi", "uvicorn", "jinja2")
    import uvicorn

    from ecc.remote.app import create_app
    from ecc.remote.protocol import GuardedH11Protocol, IdleConnections
    from ecc.remote.settings import Settings
    from ecc.remote.tokens import TokenSet, server_tokens
    from ecc.runtime.config.view import view

    if (tls_cert is None) != (tls_key is None):
        raise EccError("--tls-cert and --tls-key go together")
    for path in (tls_cert, tls_key):
        if path is not None and not path.is_file():
            raise EccError(f"TLS file {path} does not exist")
    tls = tls_cert is not None
    warning = check_bind(host, tls, insecure)
    tokens, token_source = server_tokens(token_file)
    config = view()
    settings = Settings.from_config(config, TokenSet(tokens))
    logging.basicConfig(
        level=getattr(logging, log_level.upper(), logging.INFO),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if warning:
        log.warning(warning)
    if not settings.allowed_roots:
        log.warning(
            "remote.allowed_roots is empty: every create request will be refused "
            "(ecc config set remote.allowed_roots '[\"/path/to/projects\"]')"
        )
    settings.max_requests = max_connections
    GuardedH11Protocol.header_timeout = settings.read_timeout_secs
    GuardedH11Protocol.idle = IdleConnections(
        per_peer=settings.max_idle_connections_per_peer, total=IDLE_PER_REQUEST * max_connections
    )
    app = create_app(settings)
    sock = open_socket(host, port)
    uv_config = uvicorn.Config(
        app,
        http=GuardedH11Protocol,
        ws="none",
        lifespan="on",
        interface="asgi3",
        timeout_keep_alive=KEEP_ALIVE_SECS,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_SECS,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        server_header=False,
        proxy_headers=False,
        ssl_certfile=str(tls_cert) if tls_cert else None,
        ssl_keyfile=str(tls_key) if tls_key else None,
        log_config=None,
        log_level=log_level,
        access_log=True,
    )
    server = uvicorn.Server(uv_config)
    bound_host, bound_port = sock.getsockname()[:2]
    scheme = "https" if tls else "http"
    shown = f"[{bound_host}]" if ":" in bound_host else bound_host
    log.info(
        "ecc remote: %d token(s) from %s; allowed roots: %s",
        len(tokens),
        token_source,
        ", ".join(str(r) for r in settings.allowed_roots) or "none",
    )

    original_startup = server.startup

    async def startup(sockets: Any = None) -> None:
        await original_startup(sockets=sockets)
        if server.started:
            sys.stderr.write(f"ecc remote: listening on {scheme}://{shown}:{bound_port}\n")
            sys.stderr.flush()
            if on_listening is not None:
                on_listening(app, f"{scheme}://{shown}:{bound_port}")

    server.startup = startup  # type: ignore[method-assign]
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
