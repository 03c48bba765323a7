"""``/v1/sessions``: create (and start) a session, list sessions, get one (and, from
:mod:`.messages`, its conversation and follow-ups).

A session is started with the same call as ``ecc run -d`` (``ecc.sessions.service.start``, with
the app's config): the session row is in the store before its runner is spawned, and the runner
is a detached process, so a restart of the server loses nothing (the daemon re-submits a pending
session no runner claimed). The repository, harness and profile are checked against
``remote.allowed_*`` first.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from fastapi import APIRouter, Body, Query, Response

from ecc.contract.errors import EccError
from ecc.observability.budgets import OverBudget
from ecc.remote import schemas
from ecc.remote.errors import COMMON, ApiError, responses
from ecc.remote.routes import messages
from ecc.remote.routes.common import BEARER, SessionId, find_session
from ecc.sessions.liveness import refresh_liveness

if TYPE_CHECKING:
    from ecc.contract.types import Config
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool

log = logging.getLogger("ecc.remote")


def router(settings: Settings, pool: StorePool) -> APIRouter:
    routes = APIRouter()

    @routes.post(
        "/v1/sessions",
        status_code=201,
        response_model=schemas.SessionOut,
        responses=responses(*COMMON, 403, 409, 503),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def create_session(
        response: Response, body: Annotated[schemas.SessionCreate, Body()]
    ) -> schemas.SessionOut:
        """Create a session and start it (as ``ecc run -d`` does)."""
        from ecc.sessions import manager, service

        config = settings.config
        repository = _allowed_repository(body.repository, settings)
        harness, profile = _allowed_harness_and_profile(body, repository, config)
        store = pool.get()
        request = manager.Request(
            task=body.task,
            harness=harness,
            profile=profile,
            use_worktree=body.worktree,
            name=body.name,
            cwd=repository,
        )
        try:
            session = service.start(store, request, config)
        except service.NotStarted as exc:
            raise ApiError(
                503,
                "not_started",
                f"session {exc.session.id} could not be started: {exc.message}",
            ) from None
        except OverBudget as exc:
            raise ApiError(409, "over_budget", exc.message) from None
        except EccError as exc:
            raise ApiError(422, "rejected", exc.message) from None
        log.info("session %s created (%s) in %s", session.id, harness, repository)
        response.headers["Location"] = f"/v1/sessions/{session.id}"
        return schemas.SessionOut.of(store.get_session(session.id) or session)

    @routes.get(
        "/v1/sessions",
        response_model=schemas.SessionList,
        responses=responses(*COMMON),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def list_sessions(
        state: Annotated[
            list[schemas.DisplayState] | None,
            Query(description="Real states, or waiting (a held tool call)."),
        ] = None,
        all_: Annotated[bool, Query(alias="all", description="Include finished ones.")] = False,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> schemas.SessionList:
        """Sessions, newest first: active ones unless ``all`` or ``state`` says otherwise."""
        from ecc.store.models import listed_sessions

        store = pool.get()
        refresh_liveness(store, None, settings.config)  # a dead runner's session is failed first
        rows = listed_sessions(store, state or (), all_, limit)
        return schemas.SessionList(sessions=[schemas.SessionOut.of(s) for s in rows])

    @routes.get(
        "/v1/sessions/{session_id}",
        response_model=schemas.SessionDetail,
        responses=responses(*COMMON, 404),
        dependencies=[BEARER],
        tags=["sessions"],
    )
    def get_session(session_id: SessionId) -> schemas.SessionDetail:
        store = pool.get()
        session = find_session(store, session_id)
        if refresh_liveness(store, [session], settings.config):
            session = find_session(store, session.id)
        out = schemas.SessionOut.of(session).model_dump()
        return schemas.SessionDetail(**out, output_lines=store.count_output(session.id))

    routes.include_router(messages.router(settings, pool))  # /v1/sessions/{id}/messages
    return routes


def _allowed_repository(text: str, settings: Settings) -> Path:
    if not settings.allowed_roots:
        raise ApiError(
            403, "forbidden_path", "no repository may be targeted: remote.allowed_roots is empty"
        )
    try:
        path = Path(text).resolve()
    except (OSError, RuntimeError, ValueError):
        raise ApiError(422, "invalid", "repository: not a usable path") from None
    if not any(path == root or path.is_relative_to(root) for root in settings.allowed_roots):
        raise ApiError(403, "forbidden_path", "repository is outside remote.allowed_roots")
    if not path.is_dir():
        raise ApiError(422, "invalid", "repository: not an existing directory")
    return path


def _allowed_harness_and_profile(
    body: schemas.SessionCreate, repository: Path, config: Config
) -> tuple[str, str | None]:
    from ecc.sessions import harnesses

    remote = config.remote
    profile_name = body.profile or config.default_profile
    profile = None
    if profile_name is not None:
        if profile_name not in config.agent_profiles:
            raise ApiError(422, "unknown_profile", f"unknown agent profile {profile_name!r}")
        if remote.allowed_profiles and profile_name not in remote.allowed_profiles:
            raise ApiError(403, "profile_not_allowed", f"profile {profile_name!r} is not allowed")
        try:
            from ecc.runtime.config.profiles import agent_profile

            profile = agent_profile(config, profile_name)
        except EccError as exc:
            raise ApiError(422, "unknown_profile", exc.message) from None
    wanted = body.harness or (profile.harness if profile else None) or config.default_harness
    if not wanted:
        detected = harnesses.detect(repository, config)
        if not detected:
            raise ApiError(422, "unknown_harness", "no harness given and none detected")
        wanted = detected[0]
    try:
        harness = harnesses.canonical_name(wanted, config)
    except EccError as exc:
        raise ApiError(422, "unknown_harness", exc.message) from None
    if remote.allowed_harnesses:
        allowed = set()
        for name in remote.allowed_harnesses:
            try:
                allowed.add(harnesses.canonical_name(name, config))
            except EccError:
                continue
        if harness not in allowed:
            raise ApiError(403, "harness_not_allowed", f"harness {harness!r} is not allowed")
    return harness, profile_name
