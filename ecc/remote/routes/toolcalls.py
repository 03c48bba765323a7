"""``GET /v1/sessions/{id}/tool-calls``: a session's tool calls, each once, with its risk.

The same listing as ``ecc tools`` (:mod:`ecc.observability.toolcalls`): a call ``ecc hook``
decided and the harness's output showed is one row (``source: both``); one only the output
showed was scored after it ran (``decision: observed``). The input is an excerpt.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from ecc.remote.errors import COMMON, responses
from ecc.remote.routes.common import BEARER, SessionId, find_session

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool


class ToolCallOut(BaseModel):
    id: int
    tool: str
    harness: str
    input_excerpt: str = Field(description="Bounded, sanitised, credentials masked.")
    score: float | None = Field(description="0..1; None: not scored.")
    action: str | None = Field(description="allow, review, require_confirmation or block.")
    reasons: list[str]
    decision: str | None = Field(
        description="allow, ask or deny (what ecc hook answered), or observed (seen in the "
        "output only: nothing was enforced)."
    )
    source: Literal["hook", "output", "both"]
    call_id: str | None = Field(description="The harness's own id of the call, when known.")
    created_at: str = Field(description="When the call was first seen.")

    @classmethod
    def of(cls, row: dict[str, Any]) -> ToolCallOut:
        return cls.model_validate({name: row.get(name) for name in cls.model_fields})


class ToolCallList(BaseModel):
    session_id: str
    tool_calls: list[ToolCallOut] = Field(description="Oldest first.")


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.get(
        "/v1/sessions/{session_id}/tool-calls",
        response_model=ToolCallList,
        responses=responses(*COMMON, 404),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def list_tool_calls(
        session_id: SessionId,
        limit: Annotated[int, Query(ge=1, le=500, description="The newest N calls.")] = 500,
    ) -> ToolCallList:
        """The session's tool calls, oldest first: hooked, seen in its output, or both."""
        from ecc.observability.toolcalls import listing

        store = pool.get()
        session = find_session(store, session_id)
        rows = listing(store, session.id, limit)
        return ToolCallList(session_id=session.id, tool_calls=[ToolCallOut.of(r) for r in rows])

    return routes
