"""A session's worktree: its diff rendered per file with hunks, and the actions on it (commit,
push, pull request, merge, remove), each the same call as the CLI's (``ecc worktree commit``,
``push``, ``ecc pr``, ``ecc worktree merge``, ``ecc rm``). The page asks before the ones that
publish or destroy."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ecc.contract.errors import EccError
from ecc.remote.routes.common import SessionId, find_session
from ecc.web import diffs
from ecc.web.routes.common import Form, SignedIn, back, page

if TYPE_CHECKING:
    from ecc.remote.settings import Settings
    from ecc.remote.storepool import StorePool
    from ecc.web.logins import Logins

log = logging.getLogger("ecc.web")


def _repo(session: Any) -> Path:
    return Path(session.repo_root or session.project_dir)


def with_worktree(store: Any, session_id: str) -> Any:
    """The session, refused when it has no worktree; a pool worker's branch is fetched here."""
    from ecc.sessions import mirrors

    session = find_session(store, session_id)
    if not session.worktree_branch:
        raise EccError(f"session {session.id} has no worktree")
    if session.repo_url and _repo(session).is_dir():
        mirrors.fetch_session_branch(_repo(session), session.repo_url, session.worktree_branch)
    return session


def router(settings: Settings, pool: StorePool, logins: Logins) -> APIRouter:
    routes = APIRouter()
    config = settings.config

    @routes.get("/web/sessions/{session_id}/diff")
    def diff_page(request: Request, login: SignedIn, session_id: SessionId) -> Response:
        from ecc.sessions import worktrees

        store = pool.get()
        session = find_session(store, session_id)
        here = f"/web/sessions/{session.id}"
        try:
            session = with_worktree(store, session.id)
            text = worktrees.diff(
                _repo(session),
                Path(session.worktree_path or ""),
                session.worktree_branch,
                session.base_branch,
                session.base_commit,
            )
        except EccError as exc:
            return back(here, login, f"diff: {exc.message}")
        return page(request, "diff.html", login, session=session, diff=diffs.parse(text))

    def act(login: Any, session_id: str, what: str, action: Any) -> Response:
        store = pool.get()
        session = find_session(store, session_id)
        here = f"/web/sessions/{session.id}"
        try:
            notice, to = action(store, with_worktree(store, session.id))
        except EccError as exc:
            return back(f"{here}/diff", login, f"{what} refused: {exc.message}")
        log.info("web: %s session %s (token %s)", what, session.id, login.label)
        return back(to or f"{here}/diff", login, notice)

    @routes.post("/web/sessions/{session_id}/commit")
    def commit(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import publishing

        def run(store: Any, session: Any) -> tuple[str, None]:
            made = publishing.commit(store, session)
            if not made["committed"]:
                return "Nothing to commit: the worktree is clean", None
            return f"Committed {made['files']} file(s) as {made['commit'][:12]}", None

        return act(login, session_id, "commit", run)

    @routes.post("/web/sessions/{session_id}/push")
    def push(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import publishing

        def run(store: Any, session: Any) -> tuple[str, None]:
            pushed = publishing.push(store, session)
            return f"Pushed {pushed.get('branch', session.worktree_branch)}", None

        return act(login, session_id, "push", run)

    @routes.post("/web/sessions/{session_id}/pr")
    def pull_request(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import publishing

        def run(store: Any, session: Any) -> tuple[str, None]:
            opened = publishing.open_pull_request(store, session, config)
            return f"Pull request: {opened['url']}", None

        return act(login, session_id, "pull request", run)

    @routes.post("/web/sessions/{session_id}/merge")
    def merge(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import worktrees

        def run(store: Any, session: Any) -> tuple[str, None]:
            if not session.terminal:
                raise EccError(f"session {session.id} is {session.state.value}; stop it first")
            result = worktrees.merge(
                _repo(session),
                Path(session.worktree_path or ""),
                session.worktree_branch,
                session.base_branch,
            )
            store.add_event(
                session.id, "worktree", f"merged {result['branch']} into {result['base']}"
            )
            if result["already_up_to_date"]:
                return f"{result['base']} already contains {result['branch']}", None
            return f"Merged {result['branch']} into {result['base']}", None

        return act(login, session_id, "merge", run)

    @routes.post("/web/sessions/{session_id}/remove")
    def remove(login: SignedIn, session_id: SessionId, form: Form) -> Response:
        from ecc.sessions import manager

        def run(store: Any, session: Any) -> tuple[str, str]:
            manager.remove(store, session, config)
            return f"Session {session.id} removed", "/web/"

        return act(login, session_id, "remove", run)

    return routes
