"""Reads a wirehouse lake of schema version 2 with DuckDB and pyarrow and
prints what it saw as JSON, for TestDuckDBReadsLakeV2 to compare with what
was written. Every file of a signal has the same columns: no
union_by_name, and pyarrow reads the lake as one dataset.

usage: python lakecheck_v2.py ROOT TRACE_ID
"""
import json
import os
import sys

import duckdb
import pyarrow.dataset as ds

root, trace_id = sys.argv[1], sys.argv[2]
con = duckdb.connect()


def rel(signal):
    path = os.path.join(root, signal, "**", "*.parquet")
    return f"read_parquet('{path}', hive_partitioning = true)"


logs, traces = rel("logs"), rel("traces")


def one(q, *args):
    return con.execute(q, list(args)).fetchone()


out = {
    "duckdb_version": duckdb.__version__,
    "logs": one(f"SELECT count(*) FROM {logs}")[0],
    "traces": one(f"SELECT count(*) FROM {traces}")[0],
    "by_service": {k: v for k, v in con.execute(f"SELECT service_name, count(*) FROM {traces} GROUP BY ALL").fetchall()},
    "spans_of_trace": one(f"SELECT count(*) FROM {traces} WHERE trace_id = ?", trace_id)[0],
    "types": {
        c: one(f"SELECT typeof({c}) FROM {traces} LIMIT 1")[0]
        for c in ["start_time", "duration", "kind", "status_code", "events", "links", "attributes", "resource_attributes", "attr_http_response_status_code"]
    },
    "log_types": {c: one(f"SELECT typeof({c}) FROM {logs} LIMIT 1")[0] for c in ["timestamp", "attributes", "body"]},
}

row = one(
    f"""SELECT kind, status_code, epoch_ns(start_time), attributes['t.str'], attributes['t.int'], attributes['t.map'],
        resource_attributes->>'$."host.name"', len(events), events[1].name, epoch_ns(events[1].time),
        events[1].attributes['e.k'], links[1].trace_id, links[1].attributes['l.k'], attr_http_request_method,
        attr_http_response_status_code, scope_schema_url
    FROM {traces} WHERE service_name = 'typed'"""
)
out["typed"] = [str(v) for v in row]

# pyarrow: the whole lake as one dataset (one schema), and its types.
dataset = ds.dataset(os.path.join(root, "traces"), format="parquet", partitioning="hive")
out["arrow_traces"] = dataset.count_rows()
out["arrow_types"] = {f: str(dataset.schema.field(f).type) for f in ["start_time", "kind", "events", "attributes", "resource_attributes"]}
print(json.dumps(out))
