"""The Memory page: search a repository's vault and read a memory with its backlinks, through
the vault service (the ``ecc memory search`` and ``read`` code path). Read-only: writes stay with
the CLI and MCP, as the trust model says. Memory text is untrusted and shown escaped."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import Response

from ecc.contract.errors import EccError
from ecc.web.routes.common import SignedIn, page
from ecc.web.routes.new import repositories

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

Text = Annotated[str, Query(max_length=4096)]


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()

    @routes.get("/web/memory")
    def memory_page(
        request: Request, login: SignedIn, repo: Text = "", q: Text = "", id: Text = ""
    ) -> Response:
        from ecc.vault.service import open_service

        choices = repositories(settings)
        repo = repo if repo in choices else (choices[0] if choices else "")
        context: dict[str, Any] = {
            "repositories": choices,
            "repo": repo,
            "q": q,
            "results": None,
            "memory": None,
            "error": "",
        }
        if repo and (q or id):
            try:
                service = open_service(cwd=Path(repo))
                if id:
                    context["memory"] = service.read(id)
                else:
                    context["results"] = service.search(q).get("results") or []
            except EccError as exc:
                context["error"] = exc.message
        return page(request, "memory.html", login, **context)

    return routes
