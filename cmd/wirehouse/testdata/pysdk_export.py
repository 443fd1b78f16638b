"""Export logs, spans and metrics with the OpenTelemetry Python SDK.

Usage: pysdk_export.py GRPC_ADDR HTTP_URL N [CA_FILE CERT_FILE KEY_FILE]

With the three PEM files it sends over TLS, verifying the server with
CA_FILE and presenting the client certificate (mutual TLS): grpcio's own TLS
stack (BoringSSL) for gRPC, requests' for HTTP (give an https URL).

Sends, with the SDK's own OTLP exporters (grpcio and the protobuf runtime,
another implementation than Go's):
  - over gRPC with gzip: logs and spans with test.id 0..N-1, and metrics;
  - over HTTP/protobuf with gzip: logs and spans with test.id N..2N-1, and
    metrics.
Metrics, per transport t in {grpc, http}: counter py.requests (unit 1)
incremented N times with route=/t, histogram py.latency (unit ms) recording
1..N with route=/t, and histogram py.size (unit By) with the SDK's
exponential bucket aggregation recording 1..N.
Every export's result is checked, and an exporter that raises counts as a
failure; prints a JSON summary (records exported per signal, failures) and
exits 1 if an export failed.
"""

import json
import logging
import sys

from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GRPCLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter as GRPCMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GRPCSpanExporter
from opentelemetry.exporter.otlp.proto.http import Compression as HTTPCompression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HTTPLogExporter
from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter as HTTPMetricExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HTTPSpanExporter
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
import grpc
from grpc import Compression as GRPCCompression

results = {"exported": {"logs": 0, "spans": 0, "metrics": 0}, "failed": []}


class Checked:
    """Wraps an exporter and records the result of every export: for logs
    and spans the records exported, for metrics the exports."""

    def __init__(self, signal, transport, exporter):
        self._signal = signal
        self._name = f"{transport} {signal}"
        self._exporter = exporter

    def __getattr__(self, attr):
        return getattr(self._exporter, attr)

    def export(self, batch, *args, **kwargs):
        try:
            r = self._exporter.export(batch, *args, **kwargs)
        except Exception as e:  # the SDK would log and swallow it
            results["failed"].append(f"{self._name}: raised {e!r}")
            raise
        if getattr(r, "name", str(r)) != "SUCCESS":
            results["failed"].append(f"{self._name}: {r}")
        elif self._signal == "metrics":
            results["exported"]["metrics"] += 1
        else:
            results["exported"][self._signal] += len(batch)
        return r


def send(transport, grpc_addr, http_url, first, n, tls):
    resource = Resource.create({"service.name": "py-sdk-test", "service.instance.id": transport})
    if transport == "grpc":
        kw = {"insecure": True}
        if tls:
            ca, cert, key = (open(f, "rb").read() for f in tls)
            kw = {"insecure": False, "credentials": grpc.ssl_channel_credentials(
                root_certificates=ca, private_key=key, certificate_chain=cert)}
        logs = GRPCLogExporter(endpoint=grpc_addr, compression=GRPCCompression.Gzip, **kw)
        spans = GRPCSpanExporter(endpoint=grpc_addr, compression=GRPCCompression.Gzip, **kw)
        metrics = GRPCMetricExporter(endpoint=grpc_addr, compression=GRPCCompression.Gzip, **kw)
    else:
        kw = {}
        if tls:
            kw = {"certificate_file": tls[0], "client_certificate_file": tls[1], "client_key_file": tls[2]}
        logs = HTTPLogExporter(endpoint=http_url + "/v1/logs", compression=HTTPCompression.Gzip, **kw)
        spans = HTTPSpanExporter(endpoint=http_url + "/v1/traces", compression=HTTPCompression.Gzip, **kw)
        metrics = HTTPMetricExporter(endpoint=http_url + "/v1/metrics", compression=HTTPCompression.Gzip, **kw)

    lp = LoggerProvider(resource=resource)
    lp.add_log_record_processor(BatchLogRecordProcessor(Checked("logs", transport, logs)))
    logger = logging.getLogger("pysdk." + transport)
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(LoggingHandler(level=logging.INFO, logger_provider=lp))
    for i in range(first, first + n):
        logger.info("python sdk log %d", i, extra={"test.id": i, "test.transport": transport})

    tp = TracerProvider(resource=resource)
    tp.add_span_processor(BatchSpanProcessor(Checked("spans", transport, spans)))
    tracer = tp.get_tracer("pysdk")
    for i in range(first, first + n):
        with tracer.start_as_current_span("op", attributes={"test.id": i, "test.transport": transport}):
            pass

    reader = PeriodicExportingMetricReader(Checked("metrics", transport, metrics), export_interval_millis=3_600_000)
    exponential = View(instrument_name="py.size", aggregation=ExponentialBucketHistogramAggregation())
    mp = MeterProvider(resource=resource, metric_readers=[reader], views=[exponential])
    meter = mp.get_meter("pysdk")
    requests = meter.create_counter("py.requests", unit="1", description="requests served")
    latency = meter.create_histogram("py.latency", unit="ms", description="request latency")
    size = meter.create_histogram("py.size", unit="By", description="response size")
    for i in range(1, n + 1):
        requests.add(1, {"route": "/" + transport})
        latency.record(i, {"route": "/" + transport})
        size.record(i, {"route": "/" + transport})

    lp.shutdown()
    tp.shutdown()
    mp.shutdown()


def main():
    grpc_addr, http_url, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    tls = sys.argv[4:7] or None
    send("grpc", grpc_addr, http_url, 0, n, tls)
    send("http", grpc_addr, http_url, n, n, tls)
    print(json.dumps(results))
    sys.exit(1 if results["failed"] else 0)


if __name__ == "__main__":
    main()
