"""The approvals inbox (every held call across sessions) and deciding one, as
``POST /v1/approvals/{id}`` does (:func:`ecc.observability.approvals.decide`), recorded as
decided by ``web:<token label>@<client address>``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import Response

from ecc.contract.errors import EccError
from ecc.remote.routes.approvals import APPROVAL_ID_PATTERN
from ecc.web import views
from ecc.web.routes.common import Form, SignedIn, back, fragment, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

log = logging.getLogger("ecc.web")


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()

    @routes.get("/web/approvals")
    def inbox_page(request: Request, login: SignedIn) -> Response:
        return page(request, "approvals.html", login, **views.inbox(pool.get()))

    @routes.get("/web/-/approvals")
    def inbox_rows(login: SignedIn) -> Response:
        return fragment("_approval_rows.html", csrf=login.csrf, **views.inbox(pool.get()))

    @routes.post("/web/approvals/{approval_id}")
    def decide(
        request: Request,
        login: SignedIn,
        form: Form,
        approval_id: str = PathParam(pattern=APPROVAL_ID_PATTERN),
    ) -> Response:
        from ecc.observability import approvals

        to = form.get("next", "/web/approvals")
        decision = form.get("decision", "")
        if decision not in ("allow", "deny"):
            return back(to, login, "Choose Allow or Deny")
        peer = (request.scope.get("client") or ("?", 0))[0]
        try:
            decided = approvals.decide(
                pool.get(), approval_id, decision, f"web:{login.label}@{peer}", form.get("reason")
            )
        except EccError as exc:  # decided already, unknown, ambiguous, a reason too long
            return back(to, login, exc.message)
        log.info("web: approval %s: %s (token %s)", decided["id"], decision, login.label)
        verb = "Allowed" if decision == "allow" else "Denied"
        return back(to, login, f"{verb}: {decided['tool']} ({decided['id']})")

    return routes
