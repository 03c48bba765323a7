"""``/v1/sessions/{id}/output`` (a page of captured lines) and ``/stream`` (live, as SSE)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Header, Query
from fastapi.responses import StreamingResponse

from ecc.remote import pages, schemas
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
    ) -> Any:
        """Captured output lines (a page; see ``/stream`` to follow live output).

        The body is at most ``remote.max_response_bytes`` (one line always fits): a page cut
        short says ``truncated``; continue with ``?after=next_after``.
        """
        store = pool.get()
        session = find_session(store, session_id)
        if tail is not None:  # the page that starts at the tail-th last line
            if tail:
                start = store.nth_last_seq(session.id, tail, stream)
                after = start - 1 if start is not None else 0
            else:
                after = store.nth_last_seq(session.id, 1, stream) or 0
            limit = tail
        body = pages.output_page(
            pool.get,
            session,
            after=after,
            limit=limit,
            stream=stream,
            max_bytes=settings.max_response_bytes,
        )
        return StreamingResponse(body, media_type="application/json")

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

    def read(last: int, want: int) -> tuple[list[dict[str, Any]], Any]:
        store = pool.get()
        current = store.get_session(session_id)
        rows = store.read_output(session_id, after_seq=last, stream=stream, limit=want)
        return rows, current

    last = after
    idle = 0.0
    want = pages.MIN_BATCH_ROWS  # rows per read, for about pages.BATCH_BYTES of lines
    yield b": ecc stream\n\n"
    while True:
        rows, current = await anyio.to_thread.run_sync(read, last, want)
        if rows:
            idle = 0.0
            want = pages.next_batch_rows(rows)
            frames = []
            for row in rows:
                last = row["seq"]
                frames.append(b"id: %d\nevent: line\ndata: %s\n\n" % (last, pages.encode(row)))
            del rows
            yield b"".join(frames)
            continue
        if current is None or current.state in TERMINAL:
            rows, current = await anyio.to_thread.run_sync(read, last, want)
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
