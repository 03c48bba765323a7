"""``/v1/sessions/{id}/output`` (a page of captured lines) and ``/stream`` (live, as SSE)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from ecc.remote import schemas
from ecc.remote.errors import COMMON, ApiError, responses
from ecc.remote.routes.common import BEARER, SessionId, find_session

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

SSE_POLL_SECS = 0.1
SSE_KEEPALIVE_SECS = 15.0


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.get(
        "/v1/sessions/{session_id}/output",
        response_model=schemas.OutputPage,
        responses=responses(*COMMON, 404),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def get_output(
        session_id: SessionId,
        after: Annotated[int, Query(ge=0, le=2**62, description="Lines with seq > after.")] = 0,
        limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
        tail: Annotated[int | None, Query(ge=0, le=5000, description="Only the last N.")] = None,
        stream: Annotated[schemas.Stream | None, Query()] = None,
    ) -> schemas.OutputPage:
        """Captured output lines (a page; see ``/stream`` to follow live output)."""
        from ecc.store.models import TERMINAL

        store = pool.get()
        session = find_session(store, session_id)
        if tail is not None:
            rows = store.tail_output(session.id, tail, stream) if tail else []
        else:
            rows = store.read_output(session.id, after_seq=after, stream=stream, limit=limit)
        last = rows[-1]["seq"] if rows else after
        finished = session.state in TERMINAL and (
            tail is not None or not store.read_output(session.id, after_seq=last, limit=1)
        )
        return schemas.OutputPage(
            session_id=session.id,
            state=session.state.value,
            finished=finished,
            lines=[schemas.OutputLine(**row) for row in rows],
            next_after=last,
        )

    @routes.get(
        "/v1/sessions/{session_id}/stream",
        responses={
            200: {
                "description": "Server-sent events: `line` (data: an OutputLine, id: its seq), "
                "then one `end` (data: the final session) when the session is over. "
                "Comment lines keep the connection alive. Resume with Last-Event-ID.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **responses(*COMMON, 404),
        },
        response_class=StreamingResponse,
        dependencies=[BEARER],
        tags=["sessions"],
    )
    async def stream_output(
        session_id: SessionId,
        after: Annotated[int, Query(ge=0, le=2**62)] = 0,
        stream: Annotated[schemas.Stream | None, Query()] = None,
        last_event_id: Annotated[str | None, Header(max_length=20)] = None,
    ) -> StreamingResponse:
        """Follow a session's output live as server-sent events until it ends."""
        import anyio.to_thread

        store_session = await anyio.to_thread.run_sync(lambda: find_session(pool.get(), session_id))
        start = after
        if last_event_id is not None:
            if not last_event_id.isdigit():
                raise ApiError(400, "bad_request", "Last-Event-ID must be a line number")
            start = max(start, int(last_event_id))
        return StreamingResponse(
            _events(pool, store_session.id, start, stream),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
        )

    return routes


async def _events(
    pool: StorePool, session_id: str, after: int, stream: str | None
) -> AsyncIterator[bytes]:
    """SSE frames for new lines until the session is over and every line was sent."""
    import anyio.to_thread

    from ecc.store.models import TERMINAL

    def read(last: int) -> tuple[list[dict[str, Any]], Any]:
        store = pool.get()
        current = store.get_session(session_id)
        rows = store.read_output(session_id, after_seq=last, stream=stream, limit=1000)
        return rows, current

    last = after
    idle = 0.0
    yield b": ecc stream\n\n"
    while True:
        rows, current = await anyio.to_thread.run_sync(read, last)
        if rows:
            idle = 0.0
            frames = []
            for row in rows:
                last = row["seq"]
                data = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
                frames.append(f"id: {last}\nevent: line\ndata: {data}\n\n")
            yield "".join(frames).encode("utf-8")
            continue
        if current is None or current.state in TERMINAL:
            rows, current = await anyio.to_thread.run_sync(read, last)
            if rows:
                continue  # lines written just before the final state
            final = (
                schemas.SessionOut.of(current).model_dump(mode="json")
                if current is not None
                else {"id": session_id, "state": "gone"}
            )
            data = json.dumps(final, ensure_ascii=False, separators=(",", ":"))
            yield f"event: end\ndata: {data}\n\n".encode()
            return
        idle += SSE_POLL_SECS
        if idle >= SSE_KEEPALIVE_SECS:
            idle = 0.0
            yield b": keepalive\n\n"
        await asyncio.sleep(SSE_POLL_SECS)
