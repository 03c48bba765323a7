"""What the session routes share: the bearer dependency, the id parameter and the id lookup."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Path as PathParam
from fastapi import Security
from fastapi.security import HTTPBearer

from ecc.remote import schemas
from ecc.remote.errors import ApiError

if TYPE_CHECKING:
    from ecc.store.base import Store

# The token itself is checked by the guard; this documents the scheme in OpenAPI.
BEARER = Security(HTTPBearer(auto_error=False, description="ecc remote token"))

SessionId = Annotated[
    str, PathParam(pattern=schemas.SESSION_ID_PATTERN, description="Id or unique prefix.")
]


def find_session(store: Store, ref: str) -> Any:
    """The session whose id is ``ref`` or starts with it (404 for none, 400 for several)."""
    session = store.get_session(ref)
    if session is not None:
        return session
    matches = store.ids_with_prefix(ref, limit=2)
    if not matches:
        raise ApiError(404, "not_found", f"no session matches {ref!r}")
    if len(matches) > 1:
        raise ApiError(400, "ambiguous", f"session id prefix {ref!r} is ambiguous")
    found = store.get_session(matches[0]["id"])
    if found is None:
        raise ApiError(404, "not_found", f"no session matches {ref!r}")
    return found
