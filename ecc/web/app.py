"""The web pages mounted into the remote API's FastAPI app (:func:`mount`), so one process
serves both: ``ecc remote serve`` and ``ecc web`` build the same application."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, Any

from ecc.web.guard import WebGuard
from ecc.web.logins import Logins

if TYPE_CHECKING:
    from fastapi import FastAPI

    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

_QUERY = re.compile(r"\?.*")


class _NoQueries(logging.Filter):
    """The access log never shows a query string of a web path (the sign-in link's nonce)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        path = args[2] if isinstance(args, tuple) and len(args) >= 3 else None
        if isinstance(path, str) and path.startswith("/web") and isinstance(args, tuple):
            record.args = (*args[:2], _QUERY.sub("", path), *args[3:])
        return True


def mount(api: FastAPI, settings: Settings, pool: StorePool) -> WebGuard:
    """Add the pages under ``/web/`` to ``api``; the guard in front of both (``.logins``: who is
    signed in to the pages)."""
    from ecc.web.routes import approvals, auth, groups, memory, new, sessions, worktree

    logins = Logins()
    for module in (auth, sessions, worktree, approvals, new, memory, groups):  # not in the API
        api.include_router(module.router(settings, pool, logins), include_in_schema=False)
    access = logging.getLogger("uvicorn.access")
    if not any(isinstance(f, _NoQueries) for f in access.filters):
        access.addFilter(_NoQueries())
    return WebGuard(api, settings, logins)


def sign_in_link(app: Any, base_url: str) -> str:
    """A one-time sign-in link for the app :func:`mount` returned (what ``ecc web`` prints)."""
    return f"{base_url}/web/signin?nonce={app.logins.new_nonce()}"
