"""``POST /v1/sessions/{id}/stop``: stop a session as ``ecc stop`` does.

A stop waits for the session to end (up to its grace period and then some), so stops run in
worker threads of their own, at most ``--max-connections`` at once: many slow stops never take
the threads that list, get and output requests need (and health needs none).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Body

from ecc.contract.errors import EccError
from ecc.remote import schemas
from ecc.remote.errors import COMMON, ApiError, responses
from ecc.remote.routes.common import BEARER, SessionId, find_session

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

log = logging.getLogger("ecc.remote")


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()
    limiters: list[Any] = []  # made on first use: a limiter belongs to the running event loop

    @routes.post(
        "/v1/sessions/{session_id}/stop",
        response_model=schemas.SessionOut,
        responses=responses(*COMMON, 404, 409),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    async def stop_session(
        session_id: SessionId,
        body: Annotated[schemas.StopRequest | None, Body()] = None,
    ) -> schemas.SessionOut:
        """Stop a session: SIGTERM its process group, SIGKILL after the grace period."""
        import anyio
        import anyio.to_thread

        if not limiters:
            limiters.append(anyio.CapacityLimiter(settings.max_requests))
        grace = body.grace if body else None
        return await anyio.to_thread.run_sync(stop, session_id, grace, limiter=limiters[0])

    def stop(session_id: str, grace: float | None) -> schemas.SessionOut:
        from ecc.sessions import manager
        from ecc.store.models import TERMINAL

        store = pool.get()
        session = find_session(store, session_id)
        if session.state in TERMINAL:
            raise ApiError(409, "finished", f"session {session.id} is already {session.state}")
        try:
            final = manager.stop(store, session, settings.config, grace)
        except EccError as exc:
            raise ApiError(409, "finished", exc.message) from None
        log.info("session %s stopped on request: %s", final.id, final.state.value)
        return schemas.SessionOut.of(final)

    return routes
