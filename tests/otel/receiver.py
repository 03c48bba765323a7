"""Test OTLP collectors on 127.0.0.1, over HTTP (:class:`Receiver`) and gRPC
(:class:`GrpcReceiver`): each decodes every request with opentelemetry-proto's own protobuf
classes (``ExportTraceServiceRequest``, ``ExportMetricsServiceRequest``) and answers as a
collector does, so the exporter under test talks the real protocol."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

PATHS = {
    "/v1/traces": (ExportTraceServiceRequest, ExportTraceServiceResponse),
    "/v1/metrics": (ExportMetricsServiceRequest, ExportMetricsServiceResponse),
}


class Receiver:
    """Start it, point ``OTEL_EXPORTER_OTLP_ENDPOINT`` at :attr:`endpoint`; :meth:`stop` and
    :meth:`start` again keep the port, as a collector restarted in place would."""

    def __init__(self) -> None:
        self.port = 0
        self.traces: list[ExportTraceServiceRequest] = []
        self.metrics: list[ExportMetricsServiceRequest] = []
        self.rejected: list[str] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Receiver:
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                kinds = PATHS.get(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if kinds is None or self.headers.get("Content-Type") != "application/x-protobuf":
                    receiver.rejected.append(f"{self.path} {self.headers.get('Content-Type')}")
                    self.send_response(404)
                    self.end_headers()
                    return
                request = kinds[0]()
                request.ParseFromString(body)
                receiver.received(request)
                answer = kinds[1]().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()
            self.server = None

    def received(self, request: Any) -> None:
        with self.lock:
            is_trace = isinstance(request, ExportTraceServiceRequest)
            (self.traces if is_trace else self.metrics).append(request)

    def spans(self) -> list[Any]:
        """Every span received, with its resource's attributes as ``span.resource``."""
        with self.lock:
            requests = list(self.traces)
        found = []
        for request in requests:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    found.extend((resource_spans.resource, span) for span in scope_spans.spans)
        return found

    def metric_points(self) -> dict[str, list[tuple[dict[str, Any], float, int]]]:
        """``{metric name: [(attributes, value, temporality)]}`` over every request."""
        with self.lock:
            requests = list(self.metrics)
        found: dict[str, list[tuple[dict[str, Any], float, int]]] = {}
        for request in requests:
            for resource_metrics in request.resource_metrics:
                for scope_metrics in resource_metrics.scope_metrics:
                    for metric in scope_metrics.metrics:
                        for point in metric.sum.data_points:
                            value = point.as_int if point.HasField("as_int") else point.as_double
                            found.setdefault(metric.name, []).append(
                                (
                                    attributes(point.attributes),
                                    value,
                                    metric.sum.aggregation_temporality,
                                )
                            )
        return found

    def wait_spans(self, count: int, timeout: float = 60.0) -> list[Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            spans = self.spans()
            if len(spans) >= count:
                return spans
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {count} spans; got {len(self.spans())}")


def attributes(pairs: Any) -> dict[str, Any]:
    """OTLP ``KeyValue`` list as a dict of plain values."""
    out: dict[str, Any] = {}
    for pair in pairs:
        value = pair.value
        kind = value.WhichOneof("value")
        if kind == "array_value":
            out[pair.key] = [getattr(v, v.WhichOneof("value")) for v in value.array_value.values]
        else:
            out[pair.key] = getattr(value, kind) if kind else None
    return out


class GrpcReceiver(Receiver):
    """The same collector over OTLP/gRPC (the services of opentelemetry-proto's ``_pb2_grpc``)."""

    def start(self) -> GrpcReceiver:
        from concurrent.futures import ThreadPoolExecutor

        import grpc
        from opentelemetry.proto.collector.metrics.v1 import metrics_service_pb2_grpc
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2_grpc

        receiver = self

        class Traces(trace_service_pb2_grpc.TraceServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                receiver.received(request)
                return ExportTraceServiceResponse()

        class Metrics(metrics_service_pb2_grpc.MetricsServiceServicer):
            def Export(self, request: Any, context: Any) -> Any:
                receiver.received(request)
                return ExportMetricsServiceResponse()

        server = grpc.server(ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(Traces(), server)
        metrics_service_pb2_grpc.add_MetricsServiceServicer_to_server(Metrics(), server)
        self.port = server.add_insecure_port(f"127.0.0.1:{self.port}")
        server.start()
        self.grpc_server = server
        return self

    def stop(self) -> None:
        server = getattr(self, "grpc_server", None)
        if server is not None:
            server.stop(grace=None).wait()
            self.grpc_server = None
