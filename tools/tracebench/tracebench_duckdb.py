"""DuckDB's side of `go run ./tools/tracebench`: runs the same trace-by-id and
search queries as SQL over the lake's Parquet files, one connection, in
the order given, fetching every row (as an Arrow table), and prints the latencies (seconds,
warm-up queries left out) and the rows of each as JSON on stdout.

stdin: {"root": DIR, "warm_up": N, "queries": [{"kind": "id", "trace_id": HEX}
        | {"kind": "search", "search": {...}, "start_min": RFC3339, "start_max": RFC3339}]}
"""
import json
import os
import sys
import time
from datetime import datetime, timedelta

import duckdb

req = json.load(sys.stdin)
path = os.path.join(req["root"], "traces", "tenant=default", "**", "*.parquet")
traces = f"read_parquet('{path}')"
con = duckdb.connect()
# Keep Parquet footers between queries, as lakeread keeps its files open:
# the same advantage on both sides.
for setting in ("enable_object_cache", "parquet_metadata_cache"):
    try:
        con.execute(f"SET {setting} = true")
    except duckdb.Error:
        pass  # not a setting of this DuckDB version

BY_ID = f"SELECT * FROM {traces} WHERE trace_id = $id"
# The 20 traces whose matching spans end last (ties: by id), each read
# whole (within an hour of the window, as lakeread reads a found trace).
SEARCH = f"""
WITH m AS (
    SELECT trace_id, max(epoch_ns(start_time) + duration) AS t FROM {traces}
    WHERE service_name = $service AND name = $operation AND attributes[$key] = $value
      AND duration >= $duration AND start_time >= $start_min::TIMESTAMPTZ_NS AND start_time < $start_max::TIMESTAMPTZ_NS
    GROUP BY trace_id ORDER BY t DESC, trace_id LIMIT 20)
SELECT s.* FROM {traces} s
WHERE s.trace_id IN (SELECT trace_id FROM m)
  AND s.start_time >= ($start_min - INTERVAL 1 HOUR)::TIMESTAMPTZ_NS AND s.start_time < ($start_max + INTERVAL 1 HOUR)::TIMESTAMPTZ_NS
"""


def when(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


seconds = {"id": [], "search": []}
rows_of = {"id": [], "search": []}
seen = {"id": 0, "search": 0}
for q in req["queries"]:
    kind = q["kind"]
    t = time.perf_counter()
    if kind == "id":
        rows = con.sql(BY_ID, params={"id": q["trace_id"]}).to_arrow_table().num_rows
    else:
        s = q["search"]
        rows = con.sql(SEARCH, params={
            "service": s["Service"], "operation": s["Operation"], "key": s["Key"], "value": s["Value"],
            "duration": s["Duration"], "start_min": when(q["start_min"]), "start_max": when(q["start_max"]),
        }).to_arrow_table().num_rows
    dt = time.perf_counter() - t
    if not rows:
        sys.exit(f"DuckDB found nothing for {q}")
    seen[kind] += 1
    if seen[kind] > req["warm_up"]:
        seconds[kind].append(dt)
        rows_of[kind].append(rows)
json.dump({"version": duckdb.__version__, "seconds": seconds, "rows": rows_of}, sys.stdout)
