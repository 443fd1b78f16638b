"""Send traces across three services with the OpenTelemetry Python SDK
over OTLP/HTTP, for the span metrics and service graph oracle.

Each trace: py-frontend's root server span "GET /checkout" calls
py-cart (a client span, then py-cart's server span, its child); py-cart
calls py-inventory the same way and calls an uninstrumented payments
service (a client span with peer.service and no server span);
py-inventory queries a database (a client span with db.system and
db.name). Every third trace's py-cart server span and its caller's
client span end in error. Every span is exported as it ends (one request
a span), so that a client and its server arrive well within the service
graph's wait for a pair.

usage: python pysdk_graph.py HTTP_BASE_URL N
"""
import sys
import time

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import SpanKind, Status, StatusCode, set_span_in_context

base, n = sys.argv[1].rstrip("/"), int(sys.argv[2])


def tracer(service, **attrs):
    tp = TracerProvider(resource=Resource.create({"service.name": service, **attrs}))
    tp.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=base + "/v1/traces")))
    return tp, tp.get_tracer("pysdk.graph")


front_tp, front = tracer("py-frontend", **{"service.instance.id": "front-1", "deployment.environment.name": "test"})
cart_tp, cart = tracer("py-cart")
inv_tp, inv = tracer("py-inventory")


def work(ms):
    time.sleep(ms / 1000)


for i in range(n):
    fail = i % 3 == 0
    with front.start_as_current_span("GET /checkout", kind=SpanKind.SERVER, attributes={"http.route": "/checkout"}):
        with front.start_as_current_span("POST /cart", kind=SpanKind.CLIENT) as call:
            with cart.start_as_current_span("POST /cart", kind=SpanKind.SERVER, context=set_span_in_context(call)) as srv:
                with cart.start_as_current_span("GET /stock", kind=SpanKind.CLIENT) as stock:
                    with inv.start_as_current_span("GET /stock", kind=SpanKind.SERVER, context=set_span_in_context(stock)):
                        with inv.start_as_current_span("SELECT stock", kind=SpanKind.CLIENT, attributes={
                            "db.system": "postgresql", "db.name": "stockdb", "db.statement": "SELECT 1"}):
                            work(1 + i % 5)
                with cart.start_as_current_span("charge", kind=SpanKind.CLIENT, attributes={"peer.service": "payments"}):
                    work(2 + i % 7)
                if fail:
                    srv.set_status(Status(StatusCode.ERROR, "out of stock"))
            if fail:
                call.set_status(Status(StatusCode.ERROR))
for tp in (front_tp, cart_tp, inv_tp):
    tp.shutdown()
print("sent", n)
