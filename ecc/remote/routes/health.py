"""``GET /v1/health``: liveness, the one route besides the schema that needs no token."""

from __future__ import annotations

from typing import TYPE_CHECKING

from fastapi import APIRouter

from ecc.remote import schemas

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.get("/v1/health", response_model=schemas.Health, tags=["meta"])
    async def health() -> schemas.Health:
        """Liveness only; needs no token and reveals nothing else.

        Answered on the event loop itself: no worker thread, so slow work that fills the thread
        pools (stops, store reads) cannot delay it.
        """
        return schemas.Health(ok=True)

    return routes
