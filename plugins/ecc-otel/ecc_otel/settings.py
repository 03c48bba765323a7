"""Where and how to send: the OpenTelemetry SDK's own environment variables, nothing else.

``OTEL_EXPORTER_OTLP_ENDPOINT`` (or the per-signal ``…_TRACES_ENDPOINT`` /
``…_METRICS_ENDPOINT``) turns the exporter on; ``OTEL_SDK_DISABLED=true`` turns it off.
``OTEL_EXPORTER_OTLP_PROTOCOL`` picks ``http/protobuf`` (the default) or ``grpc`` (the
``ecc-otel[grpc]`` extra). Headers, timeouts, compression and certificates are read by the SDK's
exporters themselves (``OTEL_EXPORTER_OTLP_HEADERS``…), the service name by its resource
(``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``). Environment variables are the user's own,
never a repository's, so no configuration file can send a session elsewhere.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

ENDPOINTS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
)
PROTOCOLS = ("http/protobuf", "grpc")
DEFAULT_TIMEOUT_SECS = 5.0  # per request, unless OTEL_EXPORTER_OTLP_TIMEOUT says otherwise


@dataclass(frozen=True)
class Settings:
    endpoint: str  # what the environment names (for messages; the exporters read it themselves)
    protocol: str
    timeout: float | None  # None: the SDK reads OTEL_EXPORTER_OTLP_(TRACES_|METRICS_)TIMEOUT

    @classmethod
    def from_env(cls) -> Settings | None:
        """The settings, or None when no OTLP endpoint is set (or the SDK is disabled)."""
        if os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
            return None
        endpoint = next((os.environ[name] for name in ENDPOINTS if os.environ.get(name)), "")
        if not endpoint:
            return None
        protocol = os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "").strip() or PROTOCOLS[0]
        timed = any(
            os.environ.get(f"OTEL_EXPORTER_OTLP_{part}TIMEOUT")
            for part in ("", "TRACES_", "METRICS_")
        )
        return cls(endpoint, protocol, None if timed else DEFAULT_TIMEOUT_SECS)
