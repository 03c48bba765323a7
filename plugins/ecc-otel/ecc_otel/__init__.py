"""ecc-otel: finished ecc sessions as OpenTelemetry traces and metrics over OTLP."""
