"""DuckDB's side of `go run ./tools/tracebench --kinds traceql`: runs each
query's SQL over the lake's spans files (one connection, Parquet metadata
cached as serve keeps its files open), once to warm up and then `runs`
times, fetching every row, and prints as JSON on stdout, by query name,
the latencies in seconds and the rows (each column as text) of the query,
or of its `verify` SQL when it has one.

stdin: {"root": DIR, "runs": N, "queries": [{"name", "sql", "verify"?}]}
"""
import json
import os
import sys
import time

import duckdb

req = json.load(sys.stdin)
path = os.path.join(req["root"], "traces", "tenant=default", "**", "*.parquet")
traces = f"read_parquet('{path}', union_by_name = true)"
con = duckdb.connect()
for setting in ("enable_object_cache", "parquet_metadata_cache"):
    try:
        con.execute(f"SET {setting} = true")
    except duckdb.Error:
        pass  # not a setting of this DuckDB version


def text(v):
    return "" if v is None else str(v)


out = {}
for q in req["queries"]:
    sql = q["sql"].replace("{traces}", traces)
    con.sql(sql).fetchall()  # warm up
    secs = []
    rows = None
    for _ in range(req["runs"]):
        t = time.perf_counter()
        rows = con.sql(sql).fetchall()
        secs.append(time.perf_counter() - t)
    if q.get("verify"):
        rows = con.sql(q["verify"].replace("{traces}", traces)).fetchall()
    out[q["name"]] = {"seconds": secs, "rows": [[text(c) for c in r] for r in rows]}
json.dump(out, sys.stdout)
