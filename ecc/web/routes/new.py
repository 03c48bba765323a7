"""The New session page: repository (under ``remote.allowed_roots``), harness, profile, task;
started with the API's own checks (``remote.allowed_*``) and ``sessions.service.start``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ecc.contract.errors import EccError
from ecc.remote.errors import ApiError
from ecc.web.routes.common import Form, SignedIn, back, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

log = logging.getLogger("ecc.web")
MAX_REPOSITORIES = 200


def repositories(settings: Settings) -> list[str]:
    """The allowed roots and the git repositories directly below them."""
    found: list[str] = []
    for root in settings.allowed_roots:
        found.append(str(root))
        try:
            children = sorted(p for p in root.iterdir() if (p / ".git").exists())
        except OSError:
            continue
        found.extend(str(child) for child in children)
    return found[:MAX_REPOSITORIES]


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()
    config = settings.config

    def choices() -> dict[str, Any]:
        from ecc.sessions import harnesses

        allowed = set(config.remote.allowed_harnesses)
        names = [n for n in harnesses.available(config) if not allowed or n in allowed]
        profiles = [
            p
            for p in sorted(config.agent_profiles)
            if not config.remote.allowed_profiles or p in config.remote.allowed_profiles
        ]
        return {"repositories": repositories(settings), "harnesses": names, "profiles": profiles}

    @routes.get("/web/new")
    def new_page(request: Request, login: SignedIn) -> Response:
        return page(request, "new.html", login, **choices())

    @routes.post("/web/new")
    def create(login: SignedIn, form: Form) -> Response:
        from pydantic import ValidationError

        from ecc.remote import schemas
        from ecc.remote.routes.sessions import _allowed_harness_and_profile, _allowed_repository
        from ecc.sessions import manager, service

        try:
            body = schemas.SessionCreate(
                task=form.get("task", ""),
                repository=form.get("repository", ""),
                harness=form.get("harness") or None,
                profile=form.get("profile") or None,
                worktree=form.get("worktree") == "on",
                name=form.get("name", ""),
            )
            repository = _allowed_repository(body.repository, settings)
            harness, profile = _allowed_harness_and_profile(body, repository, config)
            request = manager.Request(
                task=body.task,
                harness=harness,
                profile=profile,
                use_worktree=body.worktree,
                name=body.name,
                cwd=repository,
            )
            session = service.start(pool.get(), request, config)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first.get("loc", ()))
            return back("/web/new", login, f"Not started: {where}: {first.get('msg')}")
        except ApiError as exc:
            return back("/web/new", login, f"Not started: {exc.message}")
        except EccError as exc:
            return back("/web/new", login, f"Not started: {exc.message}")
        log.info("web: session %s created (%s) in %s", session.id, harness, repository)
        return back(f"/web/sessions/{session.id}", login, f"Session {session.id} started")

    return routes
