"""Reads a wirehouse lake with DuckDB and pyarrow and prints what it saw as
JSON, for TestDuckDBReadsLake to compare with what was written.

usage: python lakecheck.py ROOT TRACE_ID
"""
import glob
import json
import os
import sys

import duckdb
import pyarrow.parquet as pq

root, trace_id = sys.argv[1], sys.argv[2]
con = duckdb.connect()


def rel(signal):
    path = os.path.join(root, signal, "**", "*.parquet")
    return f"read_parquet('{path}', hive_partitioning = true, union_by_name = true)"


logs, traces = rel("logs"), rel("traces")
out = {
    "duckdb_version": duckdb.__version__,
    "logs": con.execute(f"SELECT count(*) FROM {logs}").fetchone()[0],
    "traces": con.execute(f"SELECT count(*) FROM {traces}").fetchone()[0],
    "by_service": {
        str(k): v
        for k, v in con.execute(
            f"SELECT coalesce(resource_service_name, '<null>'), count(*) FROM {logs} GROUP BY ALL"
        ).fetchall()
    },
    "tenants": sorted(r[0] for r in con.execute(f"SELECT DISTINCT tenant FROM {logs}").fetchall()),
    "spans_of_trace": con.execute(f"SELECT count(*) FROM {traces} WHERE trace_id = ?", [trace_id]).fetchone()[0],
}

cols = ["attr_t_str", "attr_t_int", "attr_t_double", "attr_t_bool", "attr_t_bytes", "attr_t_array", "attr_t_map"]
row = con.execute(
    "SELECT " + ", ".join(f"{c}, typeof({c})" for c in cols)
    + f" FROM {logs} WHERE resource_service_name = 'typed'"
).fetchall()
assert len(row) == 1, row
typed = {}
for i, c in enumerate(cols):
    v = row[0][2 * i]
    if isinstance(v, (bytes, bytearray)):
        v = v.hex()
    typed[c] = {"value": v, "type": row[0][2 * i + 1]}
out["duckdb_typed"] = typed

# pyarrow: every file on its own (their columns differ), rows summed; the
# typed row's values and Arrow types from its file.
arrow_rows, arrow_typed = 0, None
for path in sorted(glob.glob(os.path.join(root, "logs", "**", "*.parquet"), recursive=True)):
    table = pq.read_table(path)
    arrow_rows += table.num_rows
    if "resource_service_name" in table.column_names:
        for i, svc in enumerate(table.column("resource_service_name").to_pylist()):
            if svc == "typed":
                arrow_typed = {}
                for c in cols:
                    v = table.column(c)[i].as_py()
                    if isinstance(v, (bytes, bytearray)):
                        v = v.hex()
                    arrow_typed[c] = {"value": v, "type": str(table.schema.field(c).type)}
out["arrow_logs"] = arrow_rows
out["arrow_typed"] = arrow_typed
print(json.dumps(out))
