"""What the page routes share: the signed-in login, the checked form of an action, answers."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import parse_qs

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from ecc.remote.errors import ApiError
from ecc.web.logins import Login
from ecc.web.render import render

MAX_FIELD_CHARS = 70_000


def login_of(request: Request) -> Login:
    """The login the guard found (every route but sign-in and static files has one)."""
    login = request.scope.get("state", {}).get("web_login")
    if login is None:
        raise ApiError(401, "unauthorized", "sign in first (/web/signin)")
    return login


async def form_fields(request: Request) -> dict[str, str]:
    """An ``application/x-www-form-urlencoded`` body as one value per field (the guard has
    already capped its size and read it under the deadline)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise ApiError(415, "bad_request", "send the page's form (urlencoded)")
    try:
        text = (await request.body()).decode("utf-8")
        parsed = parse_qs(text, keep_blank_values=True, strict_parsing=False, max_num_fields=20)
    except (UnicodeDecodeError, ValueError):
        raise ApiError(400, "bad_request", "malformed form body") from None
    return {key: values[0][:MAX_FIELD_CHARS] for key, values in parsed.items()}


async def checked_form(request: Request) -> dict[str, str]:
    """The form of a state-changing request, refused (403) unless it carries the login's CSRF
    token: a page of another site cannot make the browser act for the user."""
    login = login_of(request)
    fields = await form_fields(request)
    if not login.csrf_ok(fields.get("csrf")):
        raise ApiError(403, "forbidden", "missing or wrong CSRF token; reload the page")
    return fields


Form = Annotated[dict[str, str], Depends(checked_form)]
SignedIn = Annotated[Login, Depends(login_of)]


def page(request: Request, template: str, login: Login | None, status: int = 200, **context: Any):
    """A whole page: the template with the login's CSRF token and its pending notices."""
    flash = list(login.flash) if login else []
    if login:
        login.flash.clear()
    html = render(
        template, csrf=login.csrf if login else "", flash=flash, signed_in=login is not None,
        **context,
    )  # fmt: skip
    return HTMLResponse(html, status_code=status)


def fragment(template: str, **context: Any) -> HTMLResponse:
    return HTMLResponse(render(template, **context))


def back(to: str, login: Login, notice: str | None = None) -> RedirectResponse:
    """303 to a page of this site (``to`` from a form is checked), with an optional notice."""
    if notice:
        login.flash.append(" ".join(notice.split())[:500])
    if not to.startswith("/web/") or to.startswith("//") or "\\" in to:
        to = "/web/"
    return RedirectResponse(to, status_code=303)
