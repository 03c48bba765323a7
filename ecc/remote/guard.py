"""The guard in front of every route (plain ASGI, before any routing or body parsing).

In order: a cap on the requests in progress (503 ``busy``; ``/v1/health`` is never refused nor
counted, it needs no worker thread), a cap on the headers' size (431), the bearer-token check in
constant time (401), a token bucket per token and one per peer address for failed attempts
(429), then the request body read under a size cap (413, checked on ``Content-Length`` before a
byte is read and again while reading) and a deadline (408). Only ``/v1/health`` and
``/openapi.json`` pass without a token.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi.responses import Response

from ecc.remote.errors import error_response
from ecc.remote.tokens import parse_authorization

if TYPE_CHECKING:
    from ecc.remote.settings import Settings

HEALTH_PATH = "/v1/health"
PUBLIC_PATHS = frozenset({HEALTH_PATH, "/openapi.json"})
BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})
MAX_HEADER_BYTES = 16 * 1024  # all header names and values together


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


class Guard:
    """Pure ASGI middleware: nothing reaches routing or JSON parsing before these checks."""

    def __init__(self, app: Any, settings: Settings) -> None:
        self.app = app
        self.settings = settings
        self.token_limiter = RateLimiter(settings.rate_limit_per_minute)
        self.failure_limiter = RateLimiter(settings.rate_limit_per_minute)
        self.in_progress = 0  # requests being answered, health aside

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope["path"] == HEALTH_PATH:
            await self._guarded(scope, receive, send)
            return
        if self.in_progress >= self.settings.max_requests:
            busy = error_response(
                503,
                "busy",
                f"the server is answering {self.in_progress} requests already; retry shortly",
                {"Retry-After": "1"},
            )
            await busy(scope, receive, send)
            return
        self.in_progress += 1
        try:
            await self._guarded(scope, receive, send)
        finally:
            self.in_progress -= 1

    async def _guarded(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        headers: dict[bytes, bytes] = {}
        size = 0
        for key, value in scope["headers"]:
            headers.setdefault(key, value)
            size += len(key) + len(value)
        if size > MAX_HEADER_BYTES:
            too_big = error_response(
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
            return error_response(
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
        too_big = error_response(
            413,
            "body_too_large",
            f"the request body exceeds {limit} bytes",
            {"Connection": "close"},
        )
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or len(declared) > 18:
                return error_response(
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
            return error_response(
                408,
                "request_timeout",
                f"the request body was not received within {self.settings.read_timeout_secs:g}s",
                {"Connection": "close"},
            )
        return b"".join(chunks)


def _too_many(wait: float) -> Response:
    seconds = max(1, int(wait + 0.999))
    return error_response(
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
        return await receive()

    return replay
