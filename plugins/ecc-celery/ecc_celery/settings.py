"""``[executors.celery]`` settings. The broker URL may hold a password: it is read from config,
a file or the environment, and never taken from argv or written to logs."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ecc.contract.errors import EccError

DEFAULT_QUEUE = "ecc.sessions"
ENV_BROKER = "ECC_CELERY_BROKER_URL"


@dataclass(frozen=True)
class CelerySettings:
    broker_url: str
    queue: str = DEFAULT_QUEUE

    @classmethod
    def from_config(cls, config: Any) -> CelerySettings:
        raw: dict[str, Any] = dict((getattr(config, "executors", None) or {}).get("celery", {}))
        unknown = set(raw) - {"broker_url", "broker_url_file", "queue"}
        if unknown:
            raise EccError(f"unknown key(s) in [executors.celery]: {', '.join(sorted(unknown))}")
        url = os.environ.get(ENV_BROKER) or raw.get("broker_url") or ""
        if not url and raw.get("broker_url_file"):
            path = Path(str(raw["broker_url_file"])).expanduser()
            try:
                url = path.read_text().strip()
            except OSError as exc:
                raise EccError(f"cannot read executors.celery.broker_url_file {path}: {exc}")
        if not url:
            raise EccError(
                "the celery executor needs a broker: set executors.celery.broker_url_file "
                f"(a file holding redis://…), {ENV_BROKER}, or executors.celery.broker_url"
            )
        return cls(broker_url=str(url), queue=str(raw.get("queue") or DEFAULT_QUEUE))
