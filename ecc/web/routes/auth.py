"""Signing in and out, and the static files.

Two ways in: the API token, typed once into the sign-in form (POSTed, never in a URL), or the
one-time link ``ecc web`` prints, whose nonce is exchanged for the cookie and is then spent.
Either gives an HttpOnly, SameSite=Strict cookie (Secure over TLS) naming a login that expires
on the server (:mod:`ecc.web.logins`). Failed attempts are rate-limited per client address.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Query, Request
from fastapi.responses import FileResponse, RedirectResponse, Response

from ecc.remote.errors import ApiError
from ecc.remote.guard import RateLimiter
from ecc.web.guard import cookie_value
from ecc.web.logins import COOKIE, LOGIN_SECS
from ecc.web.routes.common import SignedIn, checked_form, form_fields, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Login, Logins

log = logging.getLogger("ecc.web")

STATIC = Path(__file__).resolve().parents[1] / "static"
STATIC_FILES = {"ecc.js": "text/javascript", "ecc.css": "text/css", "favicon.svg": "image/svg+xml"}


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()
    failures = RateLimiter(settings.rate_limit_per_minute)

    def signed_in(request: Request, login: Login, cookie: str) -> RedirectResponse:
        response = RedirectResponse("/web/", status_code=303)
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=LOGIN_SECS,
            path="/web",
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        log.info("web: signed in (token %s)", login.label)
        return response

    @routes.get("/web")
    def web_root() -> RedirectResponse:
        return RedirectResponse("/web/", status_code=303)

    @routes.get("/web/signin")
    def sign_in_form(
        request: Request,
        nonce: Annotated[str | None, Query(max_length=200)] = None,
    ) -> Response:
        """The sign-in form; with ``nonce`` (the link ``ecc web`` printed), signed in at once."""
        if nonce is not None:
            if logins.redeem(nonce):
                login, cookie = logins.sign_in("local-link")
                return signed_in(request, login, cookie)
            return page(
                request,
                "signin.html",
                None,
                status=401,
                error="That sign-in link was used already or has expired: sign in with the token.",
            )
        if logins.find(cookie_value(request.headers.get("cookie", "").encode("latin-1"))):
            return RedirectResponse("/web/", status_code=303)
        return page(request, "signin.html", None, error="")

    @routes.post("/web/signin")
    async def sign_in(request: Request) -> Response:
        peer = (request.scope.get("client") or ("?", 0))[0]
        fields = await form_fields(request)
        token = fields.get("token", "").strip()
        label = settings.tokens.match(token.encode("utf-8", "replace")) if token else None
        if label is None:
            wait = failures.take(f"peer:{peer}")
            if wait:
                raise ApiError(429, "rate_limited", "too many failed sign-ins; wait a minute")
            log.warning("web: failed sign-in from %s", peer)
            return page(request, "signin.html", None, status=401, error="That token is not valid.")
        login, cookie = logins.sign_in(label)
        return signed_in(request, login, cookie)

    @routes.post("/web/signout")
    async def sign_out(request: Request, login: SignedIn) -> Response:
        await checked_form(request)
        logins.sign_out(login)
        response = RedirectResponse("/web/signin", status_code=303)
        response.delete_cookie(COOKIE, path="/web")
        return response

    @routes.get("/web/static/{name}")
    def static(name: str) -> Response:
        kind = STATIC_FILES.get(name)
        if kind is None:
            raise ApiError(404, "not_found", "no such file")
        return FileResponse(STATIC / name, media_type=kind)

    return routes
