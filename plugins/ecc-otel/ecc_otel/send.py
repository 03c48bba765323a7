"""One export: the sessions' spans, then their metrics, through the SDK's OTLP exporters.

Synchronous and bounded by the exporters' timeout (:data:`ecc_otel.settings.DEFAULT_TIMEOUT_SECS`
per request unless ``OTEL_EXPORTER_OTLP_TIMEOUT`` is set): ecc calls it after a session's end
on a thread with a deadline, and records as delivered only what this returns, so a collector
that is down costs a refused connection now and a retry later, never a lost session.
"""

from __future__ import annotations

import logging
from typing import Any

from ecc.contract.errors import EccError
from ecc.contract.types import SessionRecord
from ecc_otel.settings import Settings

log = logging.getLogger("ecc_otel")


def _exporters(settings: Settings) -> tuple[Any, Any]:
    """The span and metric exporters of the configured protocol."""
    if settings.protocol == "grpc":
        try:
            from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import (
                OTLPMetricExporter,
            )
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        except ImportError:
            raise EccError(
                "OTEL_EXPORTER_OTLP_PROTOCOL=grpc needs the grpc extra: "
                "pip install 'ecc-otel[grpc]' (or set http/protobuf)"
            ) from None
    elif settings.protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    else:
        raise EccError(
            f"OTEL_EXPORTER_OTLP_PROTOCOL={settings.protocol!r} is not supported by ecc-otel "
            "(http/protobuf or grpc)"
        )
    return OTLPSpanExporter(timeout=settings.timeout), OTLPMetricExporter(timeout=settings.timeout)


def send(records: list[SessionRecord], settings: Settings) -> list[str]:
    """Send ``records``; the ids delivered: all of them, or none when either signal failed
    (so both are offered again: spans repeat with the same ids). A record delivered before
    (``ecc otel export --since``) sends its spans again but adds nothing to the metrics."""
    from opentelemetry.sdk.metrics.export import MetricExportResult
    from opentelemetry.sdk.trace.export import SpanExportResult

    from ecc_otel import telemetry

    if not records:
        return []
    where = telemetry.resource()
    span_exporter, metric_exporter = _exporters(settings)
    try:
        spans = [span for record in records for span in telemetry.spans(record, where)]
        if span_exporter.export(spans) != SpanExportResult.SUCCESS:
            log.warning("OTLP spans not delivered to %s", settings.endpoint)
            return []
        counted = [record for record in records if not record.delivered]  # never counted twice
        if counted:
            data = telemetry.metrics(counted, where)
            timeout_ms = (settings.timeout or 10.0) * 1000
            result = metric_exporter.export(data, timeout_millis=timeout_ms)
            if result != MetricExportResult.SUCCESS:
                log.warning("OTLP metrics not delivered to %s", settings.endpoint)
                return []
    finally:
        span_exporter.shutdown()
        metric_exporter.shutdown()
    return [record.id for record in records]
