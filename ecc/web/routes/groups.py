"""A group's page (``/web/groups/{id}``): its sessions side by side, as ``ecc group ID`` shows
them (state, files changed, +/- lines, tokens, cost, the check and its output), and the pick of
one, the same call as ``ecc group pick`` (merge it, remove the others' worktrees and branches).
The sessions page shows each group as one row linking here."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Request
from fastapi import Path as PathParam
from fastapi.responses import Response

from ecc.contract.errors import EccError
from ecc.web.routes.common import Form, SignedIn, back, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

log = logging.getLogger("ecc.web")

GroupId = Annotated[str, PathParam(pattern=r"^[0-9a-f]{4,8}$", description="Id or prefix.")]


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()
    config = settings.config

    @routes.get("/web/groups/{group_id}")
    def group_page(request: Request, login: SignedIn, group_id: GroupId) -> Response:
        from ecc.sessions import groups
        from ecc.sessions.liveness import refresh_liveness

        store = pool.get()
        refresh_liveness(store, None, config)
        try:
            found = store.find_group(group_id)
        except EccError as exc:
            return back("/web/", login, exc.message)
        shown = groups.report(store, found)
        finished = shown["state"] in ("completed", "failed")
        return page(request, "group.html", login, group=shown, can_pick=finished)

    @routes.post("/web/groups/{group_id}/pick")
    def pick(login: SignedIn, group_id: GroupId, form: Form) -> Response:
        from ecc.sessions import groups

        store = pool.get()
        here = f"/web/groups/{group_id}"
        try:
            found = store.find_group(group_id)
            here = f"/web/groups/{found['id']}"
            result = groups.pick(store, found, form.get("session", ""))
        except EccError as exc:
            return back(here, login, f"pick refused: {exc.message}")
        picked = result["picked"]
        log.info("web: picked %s in group %s (token %s)", picked, found["id"], login.label)
        merge = result["merge"]
        removed = len(result["removed"])
        return back(
            here,
            login,
            f"Merged {merge['branch']} into {merge['base']}; removed {removed} other worktree(s)",
        )

    return routes
