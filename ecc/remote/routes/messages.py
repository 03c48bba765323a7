"""``/v1/sessions/{id}/messages``: a session's conversation, and a follow-up (``ecc send``).

A follow-up goes through the same service as ``ecc send`` (:func:`ecc.sessions.manager.send`):
a finished session starts its next run at once (202, the message ``sent``), an active one keeps
the message queued until its current run ends (202, ``queued``). A session whose harness
reported no session id of its own has no conversation to continue (409).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Body, Query
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ecc.contract.errors import EccError
from ecc.observability.budgets import OverBudget
from ecc.remote import schemas
from ecc.remote.errors import COMMON, ApiError, responses
from ecc.remote.routes.common import BEARER, SessionId, find_session

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

log = logging.getLogger("ecc.remote")

MAX_MESSAGE_CHARS = 65536  # and at most as many UTF-8 bytes (ecc.sessions.manager)


class MessageCreate(BaseModel):
    """The agent's next instruction."""

    model_config = ConfigDict(extra="forbid", strict=True)

    text: Annotated[str, Field(min_length=1, max_length=MAX_MESSAGE_CHARS, pattern=r"\S")] = Field(
        description="What the agent should do next (at most 65536 bytes of UTF-8)."
    )

    @field_validator("text")
    @classmethod
    def _text(cls, value: str) -> str:
        return schemas._printable(value, "text", allow_newlines=True)


class MessageOut(BaseModel):
    id: int
    run: int | None = Field(description="The run it belongs to; None while queued.")
    role: Literal["user", "agent"] = Field(description="user: a prompt; agent: an answer.")
    status: Literal["queued", "sent", "received"] = Field(
        description="queued: waits for the current run to end; sent: given to a run; "
        "received: an answer of the agent."
    )
    text: str
    created_at: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> MessageOut:
        return cls.model_validate({name: row.get(name) for name in cls.model_fields})


class FollowUpOut(schemas.SessionOut):
    message: MessageOut


class Conversation(BaseModel):
    session_id: str
    messages: list[MessageOut] = Field(description="Oldest first: run by run, then queued.")
    truncated: bool = Field(
        description="Older turns were left out (limit, or remote.max_response_bytes)."
    )


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.post(
        "/v1/sessions/{session_id}/messages",
        status_code=202,
        response_model=FollowUpOut,
        responses=responses(*COMMON, 404, 409),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def send_message(session_id: SessionId, body: Annotated[MessageCreate, Body()]) -> FollowUpOut:
        """Continue the session with its agent's next instruction (as ``ecc send`` does)."""
        from ecc.sessions import manager

        store = pool.get()
        session = find_session(store, session_id)
        try:
            current, message = manager.send(store, session, body.text, settings.config)
        except manager.InvalidMessage as exc:
            raise ApiError(422, "invalid", exc.message) from None
        except OverBudget as exc:
            raise ApiError(409, "over_budget", exc.message) from None
        except EccError as exc:  # nothing to continue, a worktree gone, a live harness
            raise ApiError(409, "refused", exc.message) from None
        log.info("session %s: follow-up %s (%s)", current.id, message["id"], message["status"])
        out = schemas.SessionOut.of(current).model_dump()
        return FollowUpOut(**out, message=MessageOut.of(message))

    @routes.get(
        "/v1/sessions/{session_id}/messages",
        response_model=Conversation,
        responses=responses(*COMMON, 404),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def list_messages(
        session_id: SessionId, limit: Annotated[int, Query(ge=1, le=1000)] = 200
    ) -> Conversation:
        """The conversation: each run's prompt and the agent's answers, the newest ``limit``."""
        store = pool.get()
        session = find_session(store, session_id)
        rows = store.list_messages(session.id)
        kept: list[dict[str, Any]] = []
        size = 0
        for row in reversed(rows[-limit:]):
            size += len(row["text"].encode("utf-8", "replace")) + 200
            if kept and size > settings.max_response_bytes:
                break
            kept.append(row)
        kept.reverse()
        return Conversation(
            session_id=session.id,
            messages=[MessageOut.of(row) for row in kept],
            truncated=len(kept) < len(rows),
        )

    return routes
