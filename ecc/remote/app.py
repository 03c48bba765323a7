"""The remote API as an ASGI application (FastAPI on Starlette), served by :mod:`.server`.

Layers, outermost first:

1. :class:`Guard` (plain ASGI, before any routing or body parsing): bearer-token check in
   constant time (401), a token bucket per token and one per peer address for failed attempts
   (429), then the request body read under a size cap (413, checked on ``Content-Length`` before
   a byte is read and again while reading) and a deadline (408). Only ``/v1/health`` and
   ``/openapi.json`` pass without a token.
2. FastAPI routes under ``/v1/`` with pydantic models (:mod:`.schemas`); every error, including
   FastAPI's own validation errors and unknown routes, is the JSON :class:`~.schemas.ErrorOut`.

Sessions are created and started with the same calls as ``ecc run -d``
(``manager.create`` then ``manager.submit``): the session row is in the store before its runner
is spawned, and the runner is a detached process, so a restart of the server loses nothing (the
daemon re-submits a pending session no runner claimed). Store calls run in worker threads, each
with its own connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Body, Depends, FastAPI, Header, Query, Request, Security
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response, StreamingResponse
from fastapi.security import HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from ecc import __version__
from ecc.contract.errors import EccError
from ecc.remote import schemas
from ecc.remote.tokens import TokenSet, parse_authorization

if TYPE_CHECKING:
    from ecc.runtime.config.model import Config
    from ecc.store.base import Store

log = logging.getLogger("ecc.remote")

PUBLIC_PATHS = frozenset({"/v1/health", "/openapi.json"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
MAX_HEADER_BYTES = 16 * 1024  # all header names and values together
SSE_POLL_SECS = 0.1
SSE_KEEPALIVE_SECS = 15.0


class ApiError(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class Settings:
    """Everything the app needs, fixed at start-up."""

    tokens: TokenSet
    config: Config
    max_body_bytes: int
    rate_limit_per_minute: int
    read_timeout_secs: float
    allowed_roots: list[Path] = field(default_factory=list)

    @classmethod
    def from_config(cls, config: Config, tokens: TokenSet) -> Settings:
        remote = config.remote
        roots = []
        for root in remote.allowed_roots:
            path = Path(root).expanduser()
            if path.is_absolute():
                roots.append(path.resolve())
            else:
                log.warning("ignoring remote.allowed_roots entry %r: not an absolute path", root)
        return cls(
            tokens=tokens,
            config=config,
            max_body_bytes=remote.max_body_bytes,
            rate_limit_per_minute=remote.rate_limit_per_minute,
            read_timeout_secs=remote.read_timeout_secs,
            allowed_roots=roots,
        )


# --------------------------------------------------------------------------------------------
# Guard: authentication, rate limit, body size and read deadline


class RateLimiter:
    """Token buckets: ``per_minute`` requests a minute, bursts up to ``per_minute``."""

    MAX_KEYS = 10_000

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.capacity = float(per_minute)
        self.rate = per_minute / 60.0
        self.clock = clock
        self.buckets: dict[str, tuple[float, float]] = {}

    def take(self, key: str) -> float:
        """0 if allowed (one unit taken), else the seconds until one unit is available."""
        now = self.clock()
        level, stamp = self.buckets.get(key, (self.capacity, now))
        level = min(self.capacity, level + (now - stamp) * self.rate)
        if level >= 1.0:
            self.buckets[key] = (level - 1.0, now)
            if len(self.buckets) > self.MAX_KEYS:
                self._prune(now)
            return 0.0
        self.buckets[key] = (level, now)
        return (1.0 - level) / self.rate

    def _prune(self, now: float) -> None:
        for key, (level, stamp) in list(self.buckets.items()):
            if level + (now - stamp) * self.rate >= self.capacity:
                del self.buckets[key]


def _error_response(
    status: int, code: str, message: str, headers: dict[str, str] | None = None
) -> JSONResponse:
    body = schemas.ErrorOut(error=code, message=message).model_dump(exclude_none=True)
    return JSONResponse(body, status_code=status, headers=headers)


class Guard:
    """Pure ASGI middleware: nothing reaches routing or JSON parsing before these checks."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.token_limiter = RateLimiter(settings.rate_limit_per_minute)
        self.failure_limiter = RateLimiter(settings.rate_limit_per_minute)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[bytes, bytes] = {}
        size = 0
        for key, value in scope["headers"]:
            headers.setdefault(key, value)
            size += len(key) + len(value)
        if size > MAX_HEADER_BYTES:
            too_big = _error_response(
                431, "headers_too_large", "request headers too large", {"Connection": "close"}
            )
            await too_big(scope, receive, send)
            return
        if scope["path"] not in PUBLIC_PATHS:
            refusal = self._authenticate(scope, headers)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        if scope["method"] in BODY_METHODS or b"content-length" in headers:
            body = await self._read_body(headers, receive)
            if isinstance(body, Response):
                await body(scope, receive, send)
                return
            if body is None:
                return  # the client went away
            receive = _replay(body, receive)
        await self.app(scope, receive, send)

    def _authenticate(self, scope: dict[str, Any], headers: dict[bytes, bytes]) -> Response | None:
        token = parse_authorization(headers.get(b"authorization"))
        label = self.settings.tokens.match(token) if token is not None else None
        if label is None:
            peer = (scope.get("client") or ("?", 0))[0]
            wait = self.failure_limiter.take(f"peer:{peer}")
            if wait:
                return _too_many(wait)
            message = (
                "missing or malformed bearer token"
                if token is None
                else "the bearer token is not valid"
            )
            return _error_response(
                401, "unauthorized", message, {"WWW-Authenticate": 'Bearer realm="ecc"'}
            )
        wait = self.token_limiter.take(f"token:{label}")
        if wait:
            return _too_many(wait)
        scope.setdefault("state", {})["token_label"] = label
        return None

    async def _read_body(
        self, headers: dict[bytes, bytes], receive: Any
    ) -> bytes | Response | None:
        limit = self.settings.max_body_bytes
        too_big = _error_response(
            413,
            "body_too_large",
            f"the request body exceeds {limit} bytes",
            {"Connection": "close"},
        )
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or len(declared) > 18:
                return _error_response(
                    400, "bad_request", "invalid Content-Length", {"Connection": "close"}
                )
            if int(declared) > limit:
                return too_big
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(self.settings.read_timeout_secs):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        return None
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        return too_big
                    chunks.append(chunk)
                    if not message.get("more_body", False):
                        break
        except TimeoutError:
            return _error_response(
                408,
                "request_timeout",
                f"the request body was not received within {self.settings.read_timeout_secs:g}s",
                {"Connection": "close"},
            )
        return b"".join(chunks)


def _too_many(wait: float) -> Response:
    seconds = max(1, int(wait + 0.999))
    return _error_response(
        429,
        "rate_limited",
        f"too many requests; retry in {seconds}s",
        {"Retry-After": str(seconds)},
    )


def _replay(body: bytes, receive: Any) -> Any:
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # type: ignore[no-any-return]

    return replay


# --------------------------------------------------------------------------------------------
# Store access: one connection per worker thread


class StorePool:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.local = threading.local()
        self.opened: list[Store] = []
        self.lock = threading.Lock()

    def get(self) -> Store:
        store = getattr(self.local, "store", None)
        if store is None:
            from ecc.store.open import open_store

            store = open_store(config=self.config)
            self.local.store = store
            with self.lock:
                self.opened.append(store)
        return store

    def close(self) -> None:
        with self.lock:
            for store in self.opened:
                try:
                    store.close()
                except Exception:  # closing from another thread may fail; the process ends
                    pass
            self.opened.clear()


# --------------------------------------------------------------------------------------------
# Application


def _responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    text = {
        400: "Malformed request (e.g. invalid JSON) or ambiguous session id.",
        401: "Missing, malformed or wrong bearer token.",
        403: "Target outside remote.allowed_roots, or harness/profile not allowed.",
        404: "No such session.",
        408: "The request body was not received in time.",
        409: "The session is already finished.",
        413: "The request body is too large.",
        422: "A field failed validation (unknown harness or profile included).",
        429: "Rate limit reached; see Retry-After.",
        431: "Request headers too large.",
        503: "The session was recorded but its runner could not be started.",
    }
    return {code: {"model": schemas.ErrorOut, "description": text[code]} for code in codes}


COMMON = (400, 401, 408, 413, 422, 429, 431)

SessionId = Annotated[
    str, PathParam(pattern=schemas.SESSION_ID_PATTERN, description="Id or unique prefix.")
]


def create_app(settings: Settings) -> Guard:
    """The ASGI application: :class:`Guard` around FastAPI (``.app`` is the FastAPI object)."""
    from contextlib import asynccontextmanager

    pool = StorePool(settings.config)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        from ecc.sessions import harnesses

        try:  # load the plugins once, before worker threads race to do it
            await anyio.to_thread.run_sync(harnesses.available, settings.config)
        except EccError as exc:
            log.warning("harness plugins: %s", exc.message)
        yield
        pool.close()

    api = FastAPI(
        title="ecc remote API",
        version=__version__,
        description="Submit, watch and stop ecc sessions. Bearer token required except on "
        "/v1/health and /openapi.json.",
        openapi_url="/openapi.json",
        docs_url=None,
        redoc_url=None,
        lifespan=lifespan,
    )
    bearer = Security(HTTPBearer(auto_error=False, description="ecc remote token"))
    api.router.dependencies.append(Depends(_reject_unknown_query))

    @api.exception_handler(ApiError)
    async def _api_error(_: Request, exc: ApiError) -> JSONResponse:
        return _error_response(exc.status, exc.code, exc.message)

    @api.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error_response(400, "bad_request", "the request body is not valid JSON")
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

    @api.exception_handler(StarletteHTTPException)
    async def _http_error(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        code = codes.get(exc.status_code, "error")
        return JSONResponse(
            schemas.ErrorOut(error=code, message=str(exc.detail)).model_dump(exclude_none=True),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @api.exception_handler(Exception)
    async def _crash(_: Request, exc: Exception) -> JSONResponse:
        log.exception("internal error")
        return _error_response(500, "internal", "internal server error")

    # -- routes ------------------------------------------------------------------------------

    @api.get("/v1/health", response_model=schemas.Health, tags=["meta"])
    def health() -> schemas.Health:
        """Liveness only; needs no token and reveals nothing else."""
        return schemas.Health(ok=True)

    @api.post(
        "/v1/sessions",
        status_code=201,
        response_model=schemas.SessionOut,
        responses=_responses(*COMMON, 403, 503),
        dependencies=[bearer],
        tags=["sessions"],
    )
    def create_session(
        response: Response, body: Annotated[schemas.SessionCreate, Body()]
    ) -> schemas.SessionOut:
        """Create a session and start it (as ``ecc run -d`` does)."""
        from ecc.sessions import manager

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
            session = manager.create(store, request, config)
        except EccError as exc:
            raise ApiError(422, "rejected", exc.message) from None
        try:
            manager.submit(store, session)
        except EccError as exc:
            raise ApiError(
                503, "not_started", f"session {session.id} could not be started: {exc.message}"
            ) from None
        log.info("session %s created (%s) in %s", session.id, harness, repository)
        response.headers["Location"] = f"/v1/sessions/{session.id}"
        return schemas.SessionOut.of(store.get_session(session.id) or session)

    @api.get(
        "/v1/sessions",
        response_model=schemas.SessionList,
        responses=_responses(*COMMON),
        dependencies=[bearer],
        tags=["sessions"],
    )
    def list_sessions(
        state: Annotated[list[schemas.SessionState] | None, Query()] = None,
        all_: Annotated[bool, Query(alias="all", description="Include finished ones.")] = False,
        limit: Annotated[int, Query(ge=1, le=1000)] = 200,
    ) -> schemas.SessionList:
        """Sessions, newest first: active ones unless ``all`` or ``state`` says otherwise."""
        from ecc.store.models import ACTIVE, State

        if state:
            wanted: list[State] | None = [State(s) for s in state]
        elif all_:
            wanted = None
        else:
            wanted = sorted(ACTIVE)
        rows = pool.get().list_sessions(wanted, limit=limit)
        return schemas.SessionList(sessions=[schemas.SessionOut.of(s) for s in rows])

    @api.get(
        "/v1/sessions/{session_id}",
        response_model=schemas.SessionDetail,
        responses=_responses(*COMMON, 404),
        dependencies=[bearer],
        tags=["sessions"],
    )
    def get_session(session_id: SessionId) -> schemas.SessionDetail:
        store = pool.get()
        session = _find(store, session_id)
        out = schemas.SessionOut.of(session).model_dump()
        return schemas.SessionDetail(**out, output_lines=store.count_output(session.id))

    @api.get(
        "/v1/sessions/{session_id}/output",
        response_model=schemas.OutputPage,
        responses=_responses(*COMMON, 404),
        dependencies=[bearer],
        tags=["sessions"],
    )
    def get_output(
        session_id: SessionId,
        after: Annotated[int, Query(ge=0, le=2**62, description="Lines with seq > after.")] = 0,
        limit: Annotated[int, Query(ge=1, le=5000)] = 1000,
        tail: Annotated[int | None, Query(ge=0, le=5000, description="Only the last N.")] = None,
        stream: Annotated[schemas.Stream | None, Query()] = None,
    ) -> schemas.OutputPage:
        """Captured output lines (a page; see ``/stream`` to follow live output)."""
        from ecc.store.models import TERMINAL

        store = pool.get()
        session = _find(store, session_id)
        if tail is not None:
            rows = store.tail_output(session.id, tail, stream) if tail else []
        else:
            rows = store.read_output(session.id, after_seq=after, stream=stream, limit=limit)
        last = rows[-1]["seq"] if rows else after
        finished = session.state in TERMINAL and (
            tail is not None or not store.read_output(session.id, after_seq=last, limit=1)
        )
        return schemas.OutputPage(
            session_id=session.id,
            state=session.state.value,
            finished=finished,
            lines=[schemas.OutputLine(**row) for row in rows],
            next_after=last,
        )

    @api.get(
        "/v1/sessions/{session_id}/stream",
        responses={
            200: {
                "description": "Server-sent events: `line` (data: an OutputLine, id: its seq), "
                "then one `end` (data: the final session) when the session is over. "
                "Comment lines keep the connection alive. Resume with Last-Event-ID.",
                "content": {"text/event-stream": {"schema": {"type": "string"}}},
            },
            **_responses(*COMMON, 404),
        },
        response_class=StreamingResponse,
        dependencies=[bearer],
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

        store_session = await anyio.to_thread.run_sync(lambda: _find(pool.get(), session_id))
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

    @api.post(
        "/v1/sessions/{session_id}/stop",
        response_model=schemas.SessionOut,
        responses=_responses(*COMMON, 404, 409),
        dependencies=[bearer],
        tags=["sessions"],
    )
    def stop_session(
        session_id: SessionId,
        body: Annotated[schemas.StopRequest | None, Body()] = None,
    ) -> schemas.SessionOut:
        """Stop a session: SIGTERM its process group, SIGKILL after the grace period."""
        from ecc.sessions import manager
        from ecc.store.models import TERMINAL

        store = pool.get()
        session = _find(store, session_id)
        if session.state in TERMINAL:
            raise ApiError(409, "finished", f"session {session.id} is already {session.state}")
        try:
            final = manager.stop(store, session, settings.config, body.grace if body else None)
        except EccError as exc:
            raise ApiError(409, "finished", exc.message) from None
        log.info("session %s stopped on request: %s", final.id, final.state.value)
        return schemas.SessionOut.of(final)

    return Guard(api, settings)


def _reject_unknown_query(request: Request) -> None:
    """Refuse query parameters the route does not declare (a typo must not pass silently)."""
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    known = {param.alias for param in route.dependant.query_params}
    unknown = sorted(set(request.query_params.keys()) - known)
    if unknown:
        raise ApiError(422, "invalid", f"unknown query parameter(s): {', '.join(unknown)}")


def _find(store: Store, ref: str) -> Any:
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
            profile = config.profile(profile_name)
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


async def _events(
    pool: StorePool, session_id: str, after: int, stream: str | None
) -> AsyncIterator[bytes]:
    """SSE frames for new lines until the session is over and every line was sent."""
    import anyio.to_thread

    from ecc.store.models import TERMINAL

    def read(last: int) -> tuple[list[dict[str, Any]], Any]:
        store = pool.get()
        current = store.get_session(session_id)
        rows = store.read_output(session_id, after_seq=last, stream=stream, limit=1000)
        return rows, current

    last = after
    idle = 0.0
    yield b": ecc stream\n\n"
    while True:
        rows, current = await anyio.to_thread.run_sync(read, last)
        if rows:
            idle = 0.0
            frames = []
            for row in rows:
                last = row["seq"]
                data = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
                frames.append(f"id: {last}\nevent: line\ndata: {data}\n\n")
            yield "".join(frames).encode("utf-8")
            continue
        if current is None or current.state in TERMINAL:
            rows, current = await anyio.to_thread.run_sync(read, last)
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
