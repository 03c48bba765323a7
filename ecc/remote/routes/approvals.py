"""``/v1/approvals``: the tool calls ``ecc hook`` holds for a decision, and deciding one.

The same service as ``ecc approvals``/``ecc approve``/``ecc deny``
(:mod:`ecc.observability.approvals`): a decision is recorded once, with ``remote:<token label>``
(the token's non-secret label, and the peer address) as who made it; a second one is 409.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any, Literal

from fastapi import APIRouter, Body, Query, Request
from fastapi import Path as PathParam
from pydantic import BaseModel, ConfigDict, Field, field_validator

from ecc.contract.errors import EccError
from ecc.remote.errors import COMMON, ApiError, responses
from ecc.remote.routes.common import BEARER
from ecc.remote.schemas import ErrorOut

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

log = logging.getLogger("ecc.remote")

APPROVAL_ID_PATTERN = r"^[0-9a-f]{4,12}$"
MAX_REASON_CHARS = 1000  # as ecc.observability.approvals.MAX_REASON_CHARS

ApprovalId = Annotated[
    str, PathParam(pattern=APPROVAL_ID_PATTERN, description="Id or unique prefix.")
]


class ApprovalDecision(BaseModel):
    """A person's answer to a held tool call."""

    model_config = ConfigDict(extra="forbid", strict=True)

    decision: Literal["allow", "deny"] = Field(description="Let the call run, or refuse it.")
    reason: Annotated[str | None, Field(max_length=MAX_REASON_CHARS)] = Field(
        default=None, description="Why (one line; the agent is told)."
    )

    @field_validator("reason")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        if value is not None and any(ord(ch) < 32 or ord(ch) == 127 for ch in value):
            raise ValueError("reason must be one line without control characters")
        return value


class ApprovalOut(BaseModel):
    id: str
    session_id: str | None
    harness: str
    tool: str
    input_excerpt: str = Field(description="Bounded, sanitised, credentials masked.")
    score: float | None
    action: str
    reasons: list[str]
    created_at: str
    expires_at: str
    on_timeout: Literal["allow", "deny"]
    decision: Literal["allow", "deny"] | None = Field(description="None while it waits.")
    decided_by: str | None
    decided_at: str | None
    reason: str

    @classmethod
    def of(cls, row: dict[str, Any]) -> ApprovalOut:
        return cls.model_validate({name: row.get(name) for name in cls.model_fields})


class ApprovalList(BaseModel):
    approvals: list[ApprovalOut]


DECIDED: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorOut, "description": "No such approval."},
    409: {"model": ErrorOut, "description": "The approval was decided or timed out already."},
}


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.get(
        "/v1/approvals",
        response_model=ApprovalList,
        responses=responses(*COMMON),
        dependencies=[BEARER],
        tags=["approvals"],
    )
    def list_approvals(
        all_: Annotated[bool, Query(alias="all", description="Include decided ones.")] = False,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> ApprovalList:
        """Held tool calls waiting for a decision, oldest first (``all``: the newest ones,
        decided or not)."""
        from ecc.observability import approvals

        store = pool.get()
        rows = approvals.history(store, limit) if all_ else approvals.pending(store)[:limit]
        return ApprovalList(approvals=[ApprovalOut.of(row) for row in rows])

    @routes.post(
        "/v1/approvals/{approval_id}",
        response_model=ApprovalOut,
        responses={**responses(*COMMON), **DECIDED},
        dependencies=[BEARER],
        tags=["approvals"],
    )
    def decide_approval(
        request: Request,
        approval_id: ApprovalId,
        body: Annotated[ApprovalDecision, Body()],
    ) -> ApprovalOut:
        """Allow or deny a held tool call; the hook holding it answers the harness."""
        from ecc.observability import approvals

        store = pool.get()
        label = request.scope.get("state", {}).get("token_label") or "?"
        peer = (request.scope.get("client") or ("?", 0))[0]
        try:
            decided = approvals.decide(
                store, approval_id, body.decision, f"remote:{label}@{peer}", body.reason
            )
        except approvals.AlreadyDecided as exc:
            raise ApiError(409, "decided", exc.message) from None
        except approvals.UnknownApproval as exc:
            raise ApiError(404, "not_found", exc.message) from None
        except EccError as exc:  # an ambiguous id prefix
            raise ApiError(400, "bad_request", exc.message) from None
        log.info("approval %s: %s by token %s", decided["id"], body.decision, label)
        return ApprovalOut.of(decided)

    return routes
