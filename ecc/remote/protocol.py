"""The HTTP/1.1 connection of ``ecc remote serve``: uvicorn's h11 protocol with two guards.

* A deadline for each request's headers (slowloris): ``remote.read_timeout_secs`` from the
  connection, or from the previous response on a kept-alive connection; uvicorn has none.
* A cap on idle connections, those not in a request (opened and waiting for headers, or kept
  alive after a response), so that silent sockets cannot exhaust the server's file descriptors.
  Per peer address (``remote.max_idle_connections_per_peer``): a new one beyond the cap closes
  that peer's oldest idle ones that have been idle for :data:`MIN_IDLE_SECS` (a burst of
  parallel requests is left alone). In all (four times ``--max-connections``): a new one
  beyond the cap closes the oldest idle one, whatever its age. Idle connections never cause a
  503: requests in progress are capped by the guard instead.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

# Beyond its peer's cap, an idle connection is closed only once it has been idle this long: a
# client opening many connections at once (parallel requests) sends each request within it.
MIN_IDLE_SECS = 1.0


class IdleConnections:
    """Connections not in a request, in the order they became idle: per peer and in all."""

    def __init__(
        self, per_peer: int = 8, total: int = 256, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.per_peer = per_peer
        self.total = total
        self.clock = clock
        self.since: dict[Any, tuple[str, float]] = {}  # oldest first (dicts keep their order)
        self.by_peer: dict[str, dict[Any, None]] = {}

    def add(self, connection: Any, peer: str) -> None:
        """``connection`` is idle from now (the newest); close the oldest beyond the caps."""
        self.discard(connection)
        now = self.clock()
        self.since[connection] = (peer, now)
        mine = self.by_peer.setdefault(peer, {})
        mine[connection] = None
        while len(mine) > self.per_peer:
            oldest = next(iter(mine))
            if now - self.since[oldest][1] < MIN_IDLE_SECS:
                break  # a burst of new connections: they are about to send their requests
            self._close(oldest)
        while len(self.since) > self.total:
            self._close(next(iter(self.since)))

    def discard(self, connection: Any) -> None:
        peer, _ = self.since.pop(connection, (None, 0.0))
        if peer is None:
            return
        mine = self.by_peer.get(peer, {})
        mine.pop(connection, None)
        if not mine:
            self.by_peer.pop(peer, None)

    def _close(self, connection: Any) -> None:
        self.discard(connection)
        connection.close_idle()

    def __len__(self) -> int:
        return len(self.since)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol plus a header deadline and the idle-connection caps."""

    header_timeout: float = 10.0
    idle: IdleConnections = IdleConnections()  # the server's, set by ``serve`` before it starts

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        self._header_timer: Any = None
        self._became_idle()

    def _waiting(self) -> bool:
        """No request in progress: waiting for (the rest of) a request's headers."""
        return self.cycle is None or self.cycle.response_complete

    def _became_idle(self) -> None:
        self._disarm_header_timer()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_overdue)
        self.idle.add(self, self.client[0] if self.client else "?")

    def _disarm_header_timer(self) -> None:
        timer = getattr(self, "_header_timer", None)
        if timer is not None:
            timer.cancel()
            self._header_timer = None

    def _headers_overdue(self) -> None:
        self._header_timer = None
        if self._waiting():
            self.close_idle()

    def close_idle(self) -> None:
        """Close this connection, which is not in a request (no response is cut short)."""
        self.idle.discard(self)
        if not self.transport.is_closing():
            self.transport.close()

    def handle_events(self) -> None:
        before = self.cycle
        super().handle_events()
        if self.cycle is not before and self.cycle is not None:  # a request's headers arrived
            self._disarm_header_timer()
            self.idle.discard(self)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request already
        if not self.transport.is_closing() and self._waiting():
            self._became_idle()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_timer()
        self.idle.discard(self)
        super().connection_lost(exc)
