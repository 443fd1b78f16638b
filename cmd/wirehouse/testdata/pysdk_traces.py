"""Send traces with the OpenTelemetry Python SDK over OTLP/gRPC and print,
base64, the OTLP ExportTraceServiceRequest of every span sent, as the
SDK's own encoder writes it, for the test to compare with what wirehouse
gives back.

Each trace: a server span with attributes of every type, an event with
attributes, an error status; two client children (one with a link to the
first trace's root, one with a nested internal span); a span of another
service in the same trace, as a downstream call.

usage: python pysdk_traces.py GRPC_ADDR N
"""
import base64
import json
import sys

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import Link, SpanKind, Status, StatusCode, set_span_in_context

grpc_addr, n = sys.argv[1], int(sys.argv[2])


class Recorder(SpanExporter):
    """Exports to wirehouse, and keeps the encoding of what it exported."""

    def __init__(self, inner):
        self.inner, self.sent, self.failed = inner, [], 0

    def export(self, spans):
        res = self.inner.export(spans)
        if res == SpanExportResult.SUCCESS:
            self.sent.append(base64.b64encode(encode_spans(spans).SerializeToString()).decode())
        else:
            self.failed += 1
        return res

    def shutdown(self):
        self.inner.shutdown()


def provider(service):
    rec = Recorder(OTLPSpanExporter(endpoint=grpc_addr, insecure=True))
    tp = TracerProvider(resource=Resource.create({"service.name": service, "deployment.environment.name": "test"}))
    tp.add_span_processor(SimpleSpanProcessor(rec))
    return tp, rec


front, front_rec = provider("py-frontend")
back, back_rec = provider("py-backend")
ft = front.get_tracer("pysdk.front", "1.0.0")
bt = back.get_tracer("pysdk.back")
first_root = None
for i in range(n):
    with ft.start_as_current_span("GET /checkout", kind=SpanKind.SERVER, attributes={
        "http.request.method": "GET", "http.route": "/checkout", "http.response.status_code": 500,
        "test.id": i, "test.ratio": 0.25, "test.flag": True, "test.tags": ["a", "b"], "test.ints": [1, 2, 3],
    }) as root:
        root.add_event("cart loaded", {"items": 3, "currency": "EUR"})
        root.set_status(Status(StatusCode.ERROR, "payment declined"))
        if first_root is None:
            first_root = root.get_span_context()
        with ft.start_as_current_span("SELECT carts", kind=SpanKind.CLIENT, attributes={"db.system.name": "postgresql"},
                                      links=[Link(first_root, {"link.reason": "retry-of"})]):
            with ft.start_as_current_span("decode rows"):
                pass
        with ft.start_as_current_span("POST /pay", kind=SpanKind.CLIENT) as call:
            with bt.start_as_current_span("charge", kind=SpanKind.SERVER, context=set_span_in_context(call),
                                          attributes={"test.id": i}):
                pass
front.shutdown()
back.shutdown()
json.dump({"sent": front_rec.sent + back_rec.sent, "failed": front_rec.failed + back_rec.failed}, sys.stdout)
