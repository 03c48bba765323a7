"""Errors of the remote API: every one, FastAPI's own included, is the JSON ``ErrorOut``."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ecc.remote import schemas

log = logging.getLogger("ecc.remote")

# The statuses most routes may answer (the guard's and validation's).
COMMON = (400, 401, 408, 413, 422, 429, 431, 503)

_DESCRIPTIONS = {
    400: "Malformed request (e.g. invalid JSON) or ambiguous session id.",
    401: "Missing, malformed or wrong bearer token.",
    403: "Target outside remote.allowed_roots, or harness/profile not allowed.",
    404: "No such session.",
    408: "The request body was not received in time.",
    409: "The session is already finished, or (create) a budget is used up with "
    'budget_action = "stop" (over_budget).',
    413: "The request body is too large.",
    422: "A field failed validation (unknown harness or profile included).",
    429: "Rate limit reached; see Retry-After.",
    431: "Request headers too large.",
    503: "Too many requests in progress (busy; see Retry-After), or the session was recorded "
    "but its runner could not be started (not_started).",
}


class ApiError(Exception):
    """A refusal a route answers with ``status`` and an ``ErrorOut`` body."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = schemas.ErrorOut(error=code, message=message).model_dump(exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


def responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """The OpenAPI ``responses`` entry documenting the error statuses ``codes``."""
    return {code: {"model": schemas.ErrorOut, "description": _DESCRIPTIONS[code]} for code in codes}


def install_handlers(api: FastAPI) -> None:
    """Turn route refusals, validation errors, unknown routes and crashes into ``ErrorOut``."""
    api.add_exception_handler(ApiError, _api_error)  # type: ignore[arg-type]
    api.add_exception_handler(RequestValidationError, _invalid)  # type: ignore[arg-type]
    api.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    api.add_exception_handler(Exception, _crash)


async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
    return error_response(exc.status, exc.code, exc.message)


async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    if any(e.get("type") == "json_invalid" for e in errors):
        return error_response(400, "bad_request", "the request body is not valid JSON")
    details = [
        schemas.ErrorDetail(
            loc=[str(part) for part in e.get("loc", ())],
            msg=str(e.get("msg", "")),
            type=str(e.get("type", "")),
        )
        for e in errors
    ]
    first = details[0] if details else None
    message = f"{'.'.join(first.loc[1:]) or 'request'}: {first.msg}" if first else "invalid"
    body = schemas.ErrorOut(error="invalid", message=message, details=details)
    return JSONResponse(body.model_dump(exclude_none=True), status_code=422)


async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
    codes = {404: "not_found", 405: "method_not_allowed"}
    code = codes.get(exc.status_code, "error")
    return JSONResponse(
        schemas.ErrorOut(error=code, message=str(exc.detail)).model_dump(exclude_none=True),
        status_code=exc.status_code,
        headers=getattr(exc, "headers", None),
    )


async def _crash(_: Request, exc: Exception) -> JSONResponse:
    log.exception("internal error")
    return error_response(500, "internal", "internal server error")
