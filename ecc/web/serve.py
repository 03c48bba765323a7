"""``ecc web``: the remote server (API and pages, :func:`ecc.remote.server.serve`) with the rules
of a local page: loopback by default, TLS required on any other address (no ``--insecure``),
and a one-time sign-in link printed for the local user once the server listens.

On loopback with no token configured anywhere, the server makes a random token for this process
alone (never written or shown): the link is then the only way in. Anywhere else a configured
token is required, as for ``ecc remote serve``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError


def serve_web(
    *,
    host: str,
    port: int,
    token_file: Path | None,
    tls_cert: Path | None,
    tls_key: Path | None,
    max_connections: int,
    log_level: str,
) -> None:
    from ecc.runtime.extras import require_extra

    require_extra("web", "ecc web", "fastapi", "uvicorn", "jinja2")
    from ecc.remote import tokens
    from ecc.remote.remotes import is_loopback
    from ecc.remote.server import serve

    loopback = is_loopback(host)
    if not loopback and tls_cert is None:
        raise EccError(
            f"ecc web on {host} (not loopback) needs TLS: pass --tls-cert and --tls-key "
            "(or keep it on 127.0.0.1 and use an SSH tunnel)"
        )
    configured = (
        token_file is not None
        or tokens.TOKEN_ENV in os.environ
        or bool(os.environ.get(tokens.TOKEN_FILE_ENV))
        or tokens.default_token_file().exists()
    )
    if not configured:
        if not loopback:
            raise EccError(
                "ecc web on a non-loopback address needs a token: run `ecc remote token`"
            )
        # read (and removed from the environment) by the server at once: never inherited
        os.environ[tokens.TOKEN_ENV] = tokens.generate()
        sys.stderr.write(
            "ecc web: no token configured (`ecc remote token`): the sign-in link is the only "
            "way in\n"
        )
    serve(
        host=host,
        port=port,
        token_file=token_file,
        tls_cert=tls_cert,
        tls_key=tls_key,
        insecure=False,
        max_connections=max_connections,
        log_level=log_level,
        on_listening=print_sign_in_link,
    )


def print_sign_in_link(app: Any, base_url: str) -> None:
    from ecc.web.app import sign_in_link
    from ecc.web.logins import NONCE_SECS

    sys.stderr.write(
        f"ecc web: sign in at {sign_in_link(app, base_url)} "
        f"(one use, within {NONCE_SECS // 60} minutes)\n"
    )
    sys.stderr.flush()
