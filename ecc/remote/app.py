"""The remote API as an ASGI application (FastAPI on Starlette), served by :mod:`.server`.

Layers, outermost first:

1. :class:`~ecc.remote.guard.Guard` (plain ASGI, before any routing or body parsing): header
   size, bearer token, rate limits, body size and read deadline; as
   :class:`ecc.web.guard.WebGuard`, which takes a session cookie instead of the token for the
   web pages under ``/web/`` (:mod:`ecc.web`).
2. FastAPI routes under ``/v1/`` (:mod:`ecc.remote.routes`) with pydantic models
   (:mod:`.schemas`); every error, including FastAPI's own validation errors and unknown routes,
   is the JSON :class:`~.schemas.ErrorOut` (:mod:`.errors`).

Store calls run in worker threads, each with its own connection (:mod:`.storepool`).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

from fastapi import Depends, FastAPI, Request

from ecc import __version__
from ecc.contract.errors import EccError
from ecc.remote.errors import ApiError, install_handlers
from ecc.remote.guard import Guard
from ecc.remote.routes import approvals, health, output, sessions, stop, toolcalls
from ecc.remote.settings import Settings
from ecc.remote.storepool import StorePool

log = logging.getLogger("ecc.remote")

# Included in this order, which is the order of the paths in /openapi.json.
ROUTERS = (health, sessions, output, toolcalls, stop, approvals)


def create_app(settings: Settings) -> Guard:
    """The ASGI application: :class:`Guard` around FastAPI (``.app`` is the FastAPI object)."""
    from contextlib import asynccontextmanager

    pool = StorePool(settings.config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        from ecc.sessions import harnesses

        try:  # load the plugins once, before worker threads race to do it
            await anyio.to_thread.run_sync(harnesses.available, settings.config)
        except EccError as exc:
            log.warning("harness plugins: %s", exc.message)
        yield
        pool.close()

    api = FastAPI(
        title="ecc remote API",
        version=__version__,
        description="Submit, watch and stop ecc sessions. Bearer token required except on "
        "/v1/health and /openapi.json.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    # before the routes are included: a route takes the router's dependencies when it is added
    api.router.dependencies.append(Depends(_reject_unknown_query))
    install_handlers(api)
    for module in ROUTERS:
        api.include_router(module.router(settings, pool))
    from ecc.web.app import mount

    return mount(api, settings, pool)  # the web pages under /web/, behind the same guard


def _reject_unknown_query(request: Request) -> None:
    """Refuse query parameters the route does not declare (a typo must not pass silently)."""
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    known = {param.alias for param in route.dependant.query_params}
    unknown = sorted(set(request.query_params.keys()) - known)
    if unknown:
        raise ApiError(422, "invalid", f"unknown query parameter(s): {', '.join(unknown)}")
