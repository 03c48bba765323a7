"""The sessions page, a session's page, and their actions (follow-up, stop, resume, closing a
conflict).

Actions go through the same services as the CLI and the API (``manager.send`` as ``ecc send``,
``manager.stop``, ``manager.resume``, ``conflicts.close`` as ``ecc conflicts resolve|dismiss``);
a refusal comes back as a notice on the page. Live parts:
``/web/-/sessions`` (the table, polled), ``/web/-/sessions/{id}`` (state and approval, polled),
``/web/-/sessions/{id}/more`` (conversation and tool calls, polled) and
``/web/-/sessions/{id}/events`` (output as server-sent events, the remote API's stream).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Header, HTTPException, Query, Request
from fastapi.responses import Response, StreamingResponse

from ecc.contract.errors import EccError
from ecc.remote.routes.common import SessionId, find_session
from ecc.web import views
from ecc.web.routes.common import Form, SignedIn, back, fragment, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

log = logging.getLogger("ecc.web")

FilterValue = Annotated[str, Query(max_length=4096)]


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()
    config = settings.config

    def listing(state: str, harness: str, repo: str) -> dict[str, Any]:
        filters = views.Filters(state=state, harness=harness, repository=repo)
        return views.sessions(pool.get(), config, filters)

    @routes.get("/web/")
    def sessions_page(
        request: Request,
        login: SignedIn,
        state: FilterValue = "",
        harness: FilterValue = "",
        repo: FilterValue = "",
    ) -> Response:
        return page(request, "sessions.html", login, **listing(state, harness, repo))

    @routes.get("/web/-/sessions")
    def sessions_rows(
        login: SignedIn, state: FilterValue = "", harness: FilterValue = "", repo: FilterValue = ""
    ) -> Response:
        return fragment("_session_rows.html", **listing(state, harness, repo))

    def session_of(session_id: str) -> Any:
        from ecc.sessions.liveness import refresh_liveness

        store = pool.get()
        session = find_session(store, session_id)
        if refresh_liveness(store, [session], config):
            session = find_session(store, session.id)
        return session

    @routes.get("/web/sessions/{session_id}")
    def session_page(request: Request, login: SignedIn, session_id: SessionId) -> Response:
        session = session_of(session_id)
        store = pool.get()
        lines, last = views.output_tail(store, session)
        return page(
            request,
            "session.html",
            login,
            lines=lines,
            last_seq=last,
            **views.session_panel(store, session),
        )

    @routes.get("/web/-/sessions/{session_id}")
    def session_panel(request: Request, login: SignedIn, session_id: SessionId) -> Response:
        session = session_of(session_id)
        context = views.session_panel(pool.get(), session)
        return fragment("_session_panel.html", csrf=login.csrf, **context)

    @routes.get("/web/-/sessions/{session_id}/more")
    def session_more(login: SignedIn, session_id: SessionId) -> Response:
        session = find_session(pool.get(), session_id)
        return fragment("_session_more.html", **views.session_panel(pool.get(), session))

    @routes.get("/web/-/sessions/{session_id}/events")
    def session_events(
        login: SignedIn,
        session_id: SessionId,
        after: Annotated[int, Query(ge=0, le=2**62)] = 0,
        last_event_id: Annotated[str | None, Header(max_length=24)] = None,
    ) -> Response:
        from ecc.remote.routes.output import _events

        session = find_session(pool.get(), session_id)
        start = after
        if last_event_id is not None and last_event_id.isdigit():
            start = max(start, int(last_event_id))
        return StreamingResponse(
            _events(pool, session.id, start, None),
            media_type="text/event-stream",
            headers={"X-Accel-Buffering": "no"},
        )

    def act(login: Any, session_id: str, what: str, action: Any) -> Response:
        store = pool.get()
        session = find_session(store, session_id)
        here = f"/web/sessions/{session.id}"
        try:
            notice = action(store, session)
        except EccError as exc:
            return back(here, login, f"{what} refused: {exc.message}")
        log.info("web: %s session %s (token %s)", what, session.id, login.label)
        return back(here, login, notice)

    @routes.post("/web/sessions/{session_id}/send")
    def send(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import manager

        def deliver(store: Any, session: Any) -> str:
            current, message = manager.send(store, session, form.get("text", ""), config)
            return manager.sent_outcome(current.id, current.state.value, message["status"])

        return act(login, session_id, "follow-up", deliver)

    @routes.post("/web/sessions/{session_id}/stop")
    def stop(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import manager

        def halt(store: Any, session: Any) -> str:
            final = manager.stop(store, session, config, None)
            return f"Session {final.id} is {final.state.value}"

        return act(login, session_id, "stop", halt)

    @routes.post("/web/sessions/{session_id}/resume")
    def resume(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import manager

        def restart(store: Any, session: Any) -> str:
            resumed = manager.resume(store, session, config)
            return f"Session {resumed.id} resumed"

        return act(login, session_id, "resume", restart)

    @routes.post("/web/sessions/{session_id}/conflicts/{conflict_id}/{how}")
    def close_conflict(
        login: SignedIn, session_id: SessionId, conflict_id: int, how: str, form: Form
    ) -> Response:
        from ecc.sessions import conflicts

        if how not in ("resolve", "dismiss"):
            raise HTTPException(status_code=404)

        def close(store: Any, session: Any) -> str:
            row = store.get_conflict(conflict_id)
            if session.id not in (row["first_session"], row["second_session"]):
                raise EccError(f"conflict {conflict_id} is not one of session {session.id}'s")
            done = conflicts.close(store, conflict_id, config, resume=how == "resolve")
            return conflicts.closed_summary(done)

        return act(login, session_id, f"conflict {how}", close)

    return routes
