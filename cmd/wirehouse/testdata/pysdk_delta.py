"""Export delta metrics with the OpenTelemetry Python SDK.

Usage: pysdk_delta.py HTTP_URL ROUNDS

The SDK's OTLP/HTTP metric exporter, asked for delta temporality, exports
once per round (force_flush), from a MeterProvider of service py-delta:
  - counter py.requests: route=/a adds round+1 every round; route=/b adds
    2 on even rounds only, so its series has gaps (a delta SDK exports no
    point for a series with no measurement in the interval);
  - histogram py.latency (ms): route=/a records round*7 % 300 and 1.5;
  - histogram py.size (By) with the exponential bucket aggregation (at
    most 20 buckets, so that it scales down as values spread): records
    3**k / 100 for k up to round, and -2.5 on odd rounds.
Every export's result is checked; prints a JSON summary and exits 1 if an
export failed.
"""

import json
import sys
import time

from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider, ObservableCounter
from opentelemetry.sdk.metrics.export import AggregationTemporality, MetricExportResult, PeriodicExportingMetricReader
from opentelemetry.sdk.metrics.view import ExponentialBucketHistogramAggregation, View
from opentelemetry.sdk.resources import Resource

url, rounds = sys.argv[1], int(sys.argv[2])
results = {"exports": 0, "failed": 0}


class Checked(OTLPMetricExporter):
    def export(self, metrics_data, *args, **kwargs):
        r = super().export(metrics_data, *args, **kwargs)
        results["exports"] += 1
        if r != MetricExportResult.SUCCESS:
            results["failed"] += 1
        return r


delta = {
    Counter: AggregationTemporality.DELTA,
    ObservableCounter: AggregationTemporality.DELTA,
    Histogram: AggregationTemporality.DELTA,
}
exporter = Checked(endpoint=url.rstrip("/") + "/v1/metrics", preferred_temporality=delta)
reader = PeriodicExportingMetricReader(exporter, export_interval_millis=3_600_000)
provider = MeterProvider(
    resource=Resource.create({"service.name": "py-delta", "service.instance.id": "py-1"}),
    metric_readers=[reader],
    views=[View(instrument_name="py.size", aggregation=ExponentialBucketHistogramAggregation(max_size=20))],
)
meter = provider.get_meter("pysdk-delta", "1.0")
requests = meter.create_counter("py.requests", unit="1")
latency = meter.create_histogram("py.latency", unit="ms")
size = meter.create_histogram("py.size", unit="By")

for r in range(rounds):
    requests.add(r + 1, {"route": "/a"})
    if r % 2 == 0:
        requests.add(2, {"route": "/b"})
    latency.record(r * 7 % 300, {"route": "/a"})
    latency.record(1.5, {"route": "/a"})
    for k in range(r + 1):
        size.record(3**k / 100)
    if r % 2 == 1:
        size.record(-2.5)
    provider.force_flush()
    time.sleep(0.02)  # the next round's points are later

provider.shutdown()
print(json.dumps(results))
sys.exit(1 if results["failed"] or results["exports"] < rounds else 0)
