"""The remote API's guard with the web pages' rules under ``/web/``.

Everything :class:`ecc.remote.guard.Guard` does stays (the cap on requests in progress, header
and body caps, the body's deadline, the bearer token and its rate limits for every other path);
under ``/web/`` a signed session cookie (:mod:`ecc.web.logins`) replaces the bearer token: a page
without one redirects to the sign-in form, a fragment or an action answers 401. Every ``/web/``
response carries the security headers: a Content-Security-Policy that allows no inline script
and nothing from elsewhere, ``nosniff``, no framing, no referrer, no caching of pages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi.responses import RedirectResponse, Response

from ecc.remote.errors import error_response
from ecc.remote.guard import Guard
from ecc.web.logins import COOKIE

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.web.logins import Logins

PREFIX = "/web"
SIGN_IN = "/web/signin"
STATIC = "/web/static/"
FRAGMENTS = "/web/-/"  # polled and streamed parts of pages: 401, never a redirect
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
    (b"cross-origin-opener-policy", b"same-origin"),
]


def is_web(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def cookie_value(header: bytes | None, name: str = COOKIE) -> str | None:
    """The value of cookie ``name`` in a ``Cookie`` header, or None."""
    if not header:
        return None
    for part in header.decode("latin-1").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value.strip('"')
    return None


class WebGuard(Guard):
    """:class:`Guard` for the whole app; ``logins`` are the web pages' signed-in browsers."""

    def __init__(self, app: Any, settings: Settings, logins: Logins) -> None:
        super().__init__(app, settings)
        self.logins = logins

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and is_web(scope["path"]):
            send = _with_security_headers(send, static=scope["path"].startswith(STATIC))
        await super().__call__(scope, receive, send)

    def _authenticate(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> Response | None:
        path = scope["path"]
        if not is_web(path):
            return super()._authenticate(scope, headers)
        if path == SIGN_IN or path.startswith(STATIC):
            return None  # the sign-in route limits failed attempts per address itself
        login = self.logins.find(cookie_value(headers.get(b"cookie")))
        if login is None:
            if scope["method"] in ("GET", "HEAD") and not path.startswith(FRAGMENTS):
                return RedirectResponse(SIGN_IN, status_code=303)
            return error_response(401, "unauthorized", "sign in first (/web/signin)")
        if scope["method"] not in ("GET", "HEAD"):  # actions count against the token's limit
            wait = self.token_limiter.take(f"token:{login.label}")
            if wait:
                return error_response(
                    429, "rate_limited", "too many requests", {"Retry-After": str(int(wait) + 1)}
                )
        state = scope.setdefault("state", {})
        state["web_login"] = login
        state["token_label"] = login.label
        return None


def _with_security_headers(send: Any, *, static: bool) -> Any:
    async def wrapped(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            headers = [
                (k, v)
                for k, v in message.get("headers", [])
                if k.lower() not in (b"cache-control", *(name for name, _ in SECURITY_HEADERS))
            ]
            headers += SECURITY_HEADERS
            headers.append((b"cache-control", b"max-age=300" if static else b"no-store"))
            message = {**message, "headers": headers}
        await send(message)

    return wrapped
