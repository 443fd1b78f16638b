"""DuckDB's side of `go run ./tools/logbench`: the same queries as SQL over the
lake's logs files, one connection (Parquet metadata cache on), in order,
fetching every row as Arrow; prints the latencies (warm-up left out) and
the rows of each query as JSON.

stdin: {"root": DIR, "warm_up": N, "queries": [{"kind": "grep"|"volume"|"bytes"|..., "service": S,
        "needle": T, "start": RFC3339, "end": RFC3339}]}
Kinds without SQL here (Drilldown's fields and patterns) are left out.
"""
import json
import os
import sys
import time
from datetime import datetime

import duckdb

req = json.load(sys.stdin)
path = os.path.join(req["root"], "logs", "tenant=default", "**", "*.parquet")
logs = f"read_parquet('{path}')"
con = duckdb.connect()
for setting in ("enable_object_cache", "parquet_metadata_cache"):
    try:
        con.execute(f"SET {setting} = true")
    except duckdb.Error:
        pass

# A record without a time has its observed time, as the Loki API (and
# Loki's OTLP ingestion) take it.
TS = "(CASE WHEN epoch_ns(timestamp) = 0 THEN observed_timestamp ELSE timestamp END)"
# The newest 1000 lines of a service holding a string, in a time range,
# with every column: the Loki API returns each line with all its labels
# and structured metadata.
GREP = f"""SELECT * FROM {logs}
WHERE service_name = $service AND body LIKE '%' || $needle || '%'
  AND {TS} >= $start::TIMESTAMPTZ_NS AND {TS} < $end::TIMESTAMPTZ_NS
ORDER BY {TS} DESC LIMIT 1000"""
# Lines per severity per minute over a range.
VOLUME = f"""SELECT severity_text, epoch_ns({TS}) // 60000000000 AS m, count(*) FROM {logs}
WHERE service_name = $service AND {TS} >= $start::TIMESTAMPTZ_NS AND {TS} < $end::TIMESTAMPTZ_NS
GROUP BY ALL"""
# Bytes of the lines per service per minute over a range, every service
# (Drilldown's volume_range).
BYTES = f"""SELECT service_name, epoch_ns({TS}) // 60000000000 AS m, sum(strlen(body))::BIGINT FROM {logs}
WHERE {TS} >= $start::TIMESTAMPTZ_NS AND {TS} < $end::TIMESTAMPTZ_NS
GROUP BY ALL"""


def when(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


seconds = {"grep": [], "volume": [], "bytes": []}
rows_of = {"grep": [], "volume": [], "bytes": []}
seen = {"grep": 0, "volume": 0, "bytes": 0}
for q in req["queries"]:
    kind = q["kind"]
    if kind not in seen:
        continue
    params = {"service": q["service"], "start": when(q["start"]), "end": when(q["end"])}
    sql = VOLUME
    if kind == "grep":
        params["needle"] = q["needle"]
        sql = GREP
    elif kind == "bytes":
        del params["service"]
        sql = BYTES
    t = time.perf_counter()
    tbl = con.sql(sql, params=params).to_arrow_table()
    dt = time.perf_counter() - t
    rows = tbl.num_rows
    if kind in ("volume", "bytes"):  # the cells, and the lines or bytes they count
        rows = [rows, sum(tbl.column(2).to_pylist())]
    seen[kind] += 1
    if seen[kind] > req["warm_up"]:
        seconds[kind].append(dt)
        rows_of[kind].append(rows)
json.dump({"version": duckdb.__version__, "seconds": seconds, "rows": rows_of}, sys.stdout)
