"""Runs SQL over a wirehouse lake with DuckDB, for tests that compare an
API's answers with an independent engine's.

usage: python duckdb_sql.py ROOT < {"name": "SQL with {logs} or {traces}", ...}
prints {"name": [[column, ...], ...], ...} (values as strings)
"""
import json
import os
import sys

import duckdb

root = sys.argv[1]
queries = json.load(sys.stdin)
con = duckdb.connect()


def rel(signal):
    # union_by_name: a logs file (schema version 3) has the key columns
    # of the attributes frequent in it, so files differ in columns.
    return f"read_parquet('{os.path.join(root, signal, '**', '*.parquet')}', hive_partitioning = false, union_by_name = true)"


out = {}
for name, sql in queries.items():
    rows = con.execute(sql.replace("{logs}", rel("logs")).replace("{traces}", rel("traces"))).fetchall()
    out[name] = [[None if v is None else str(v) for v in row] for row in rows]
json.dump(out, sys.stdout)
