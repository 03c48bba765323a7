"""What the remote app needs, fixed at start-up: tokens, config and the request limits."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ecc.remote.tokens import TokenSet

if TYPE_CHECKING:
    from ecc.contract.types import Config

log = logging.getLogger("ecc.remote")


@dataclass
class Settings:
    """Everything the app needs, fixed at start-up."""

    tokens: TokenSet
    config: Config
    max_body_bytes: int
    rate_limit_per_minute: int
    read_timeout_secs: float
    allowed_roots: list[Path] = field(default_factory=list)
    max_response_bytes: int = 4 * 1024 * 1024
    max_idle_connections_per_peer: int = 8
    # requests in progress (health aside) beyond which the guard answers 503: --max-connections
    max_requests: int = 64

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
            max_response_bytes=remote.max_response_bytes,
            max_idle_connections_per_peer=remote.max_idle_connections_per_peer,
        )
