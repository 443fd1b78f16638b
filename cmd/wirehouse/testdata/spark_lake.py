"""Reads wirehouse lakes with Apache Spark and with DuckDB and reports what
each engine sees, for cmd/wirehouse's TestServeSparkLake.

usage: python spark_lake.py BLOCK OUT SPARK_ROOT=DUCKDB_ROOT...

BLOCK is README.md's Spark block (the test changes only its endpoint, keys,
jars and bucket): it is run as written, and its `lake_files` and
`read_lake` then read each lake at SPARK_ROOT (a directory, or s3a://...).
DuckDB reads the same lake at DUCKDB_ROOT, a directory (the lake itself, or
a copy of the bucket's objects: DuckDB's S3 extension is not installed
here), leaving out a merge's inputs by the same rule implemented apart.

OUT gets {SPARK_ROOT: {signal: report}}, where a report holds, for each
engine, the rows counted, the files read and left out and every column's
type in one vocabulary (nested columns as paths: events.element.time), the
rows DuckDB counts over a plain glob, and how many rows of the compared
columns differ once both sides are sorted.
"""
import json
import os
import sys
import time

import duckdb

# The columns compared row for row. Times are epoch nanoseconds on both
# sides (Spark reads TIMESTAMP(NANOS) as bigint, DuckDB's epoch_ns).
COMPARED = {
    "logs": {
        "spark": "timestamp, observed_timestamp, service_name, severity_number, severity_text, body, "
        "trace_id, span_id, flags, attributes, resource_attributes, tenant, date, hour",
        "duckdb": "epoch_ns(timestamp), epoch_ns(observed_timestamp), service_name, severity_number, "
        "severity_text, body, trace_id, span_id, flags, attributes, resource_attributes, tenant, date, hour",
    },
    "traces": {
        "spark": "trace_id, span_id, parent_span_id, name, kind, start_time, end_time, duration, "
        "status_code, service_name, attributes, transform(events, e -> struct(e.time AS t, e.name AS n, e.attributes AS a)), "
        "size(links), tenant, date, hour",
        "duckdb": "trace_id, span_id, parent_span_id, name, kind, epoch_ns(start_time), epoch_ns(end_time), "
        "duration, status_code, service_name, attributes, "
        "list_transform(events, lambda e: {'t': epoch_ns(e.time), 'n': e.name, 'a': e.attributes}), "
        "len(links), tenant, date, hour",
    },
}


def spark_types(dtype, path, out):
    """Adds the vocabulary type of Spark type dtype at path, and of its
    children, to out."""
    name = dtype.typeName()
    if name == "struct":
        out[path] = "struct"
        for f in dtype.fields:
            spark_types(f.dataType, f"{path}.{f.name}", out)
    elif name == "array":
        out[path] = "list"
        spark_types(dtype.elementType, f"{path}.element", out)
    elif name == "map":
        out[path] = "map"
        spark_types(dtype.keyType, f"{path}.key", out)
        spark_types(dtype.valueType, f"{path}.value", out)
    else:
        out[path] = {"integer": "int32", "long": "int64", "string": "string", "date": "date",
                     "timestamp": "timestamp_us", "boolean": "bool", "double": "float64"}.get(name, "spark:" + name)


# DuckDB's type ids in the vocabulary: unsigned integers as the smallest
# signed type that holds them, as Spark reads them.
DUCKDB_VOCAB = {"integer": "int32", "bigint": "int64", "uinteger": "int64", "varchar": "string", "json": "string",
                "date": "date", "timestamp_ns": "timestamp_ns", "timestamptz_ns": "timestamp_ns",
                "boolean": "bool", "double": "float64"}


def duckdb_types(dtype, path, out):
    """Adds the vocabulary type of DuckDB type dtype at path, and of its
    children, to out."""
    if dtype.id == "struct":
        out[path] = "struct"
        for name, child in dtype.children:
            duckdb_types(child, f"{path}.{name}", out)
    elif dtype.id == "list":
        out[path] = "list"
        duckdb_types(dtype.children[0][1], f"{path}.element", out)
    elif dtype.id == "map":
        out[path] = "map"
        duckdb_types(dtype.children[0][1], f"{path}.key", out)
        duckdb_types(dtype.children[1][1], f"{path}.value", out)
    else:
        out[path] = DUCKDB_VOCAB.get(dtype.id, "duckdb:" + dtype.id)


def duckdb_files(root, signal):
    """The data files of signal under directory root and the number left
    out: .parquet files not hidden; in a partition whose .compact names an
    output that is there, the inputs it names are left out
    (docs/ARCHITECTURE.md, "Many nodes, one bucket")."""
    files, left_out = [], 0
    for dir, _, names in os.walk(os.path.join(root, signal)):
        data = {n for n in names if n.endswith(".parquet") and not n.startswith(".")}
        if ".compact" in names:
            try:
                with open(os.path.join(dir, ".compact")) as f:
                    intent = json.load(f)
            except ValueError:
                intent = None
            if intent and intent["output"] in data:
                kept = data - (set(intent["inputs"]) - {intent["output"]})
                left_out += len(data) - len(kept)
                data = kept
        files += [os.path.join(dir, n) for n in sorted(data)]
    return files, left_out


def canonical(v):
    """v as JSON-comparable data: maps and structs (a Spark Row, a DuckDB
    dict) as pairs sorted by key."""
    if hasattr(v, "asDict"):
        v = v.asDict()
    if isinstance(v, dict):
        return sorted([k, canonical(x)] for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return [canonical(x) for x in v]
    return v


def rows_of(raw):
    """The rows of raw (Spark Rows or DuckDB tuples: columns by position)
    as sorted JSON texts."""
    return sorted(json.dumps([canonical(x) for x in r]) for r in raw)


def report(ns, spark_root, duck_root, signal):
    spark = ns["spark"]
    listed = spark._jvm.org.apache.hadoop.fs.Path(f"{spark_root}/{signal}")
    fs = listed.getFileSystem(spark._jsc.hadoopConfiguration())
    all_parquet, it = 0, fs.listFiles(listed, True)
    while it.hasNext():
        name = it.next().getPath().getName()
        all_parquet += name.endswith(".parquet") and not name.startswith(".")
    spark_files = ns["lake_files"](spark_root, signal)
    df = ns["read_lake"](spark_root, signal)
    stypes = {}
    for f in df.schema.fields:
        spark_types(f.dataType, f.name, stypes)

    con = duckdb.connect()
    files, left_out = duckdb_files(duck_root, signal)
    lake = "read_parquet(?, hive_partitioning = true, hive_types_autocast = false)"
    rel = con.sql(f"SELECT * FROM {lake}", params=[files])
    dtypes = {}
    for name, t in zip(rel.columns, rel.types):
        duckdb_types(t, name, dtypes)
    rows = con.execute(f"SELECT count(*) FROM {lake}", [files]).fetchall()[0][0]
    glob = os.path.join(duck_root, signal, "**", "*.parquet")
    glob_rows = con.execute("SELECT count(*) FROM read_parquet(?)", [glob]).fetchall()[0][0]

    cols = COMPARED[signal]
    srows = rows_of(df.selectExpr(*split(cols["spark"])).collect())
    drows = rows_of(con.execute(f"SELECT {cols['duckdb']} FROM {lake}", [files]).fetchall())
    differ = [(s, d) for s, d in zip(srows, drows) if s != d]
    return {
        "spark": {"rows": df.count(), "files": len(spark_files), "left_out": all_parquet - len(spark_files),
                  "types": stypes},
        "duckdb": {"rows": rows, "files": len(files), "left_out": left_out,
                   "types": dtypes, "glob_rows": glob_rows},
        "compared": {"columns": cols["spark"], "rows": len(srows), "differ": len(differ) + abs(len(srows) - len(drows)),
                     "first": list(differ[0]) if differ else None},
    }


def split(exprs):
    """The comma-separated expressions of exprs (commas inside parentheses
    stay)."""
    out, depth, cur = [], 0, ""
    for c in exprs:
        depth += (c == "(") - (c == ")")
        if c == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
    return out + [cur.strip()]


def main():
    block_path, out_path, lakes = sys.argv[1], sys.argv[2], sys.argv[3:]
    ns = {"__name__": "readme"}
    began = time.monotonic()
    with open(block_path) as f:
        exec(compile(f.read(), "README.md's Spark block", "exec"), ns)
    print(f"README.md's Spark block (JVM start included): {time.monotonic() - began:.1f}s", file=sys.stderr)
    ns["spark"].sparkContext.setLogLevel("ERROR")
    out = {}
    for lake in lakes:
        spark_root, duck_root = lake.split("=", 1)
        out[spark_root] = {}
        for signal in ("logs", "traces"):
            began = time.monotonic()
            out[spark_root][signal] = report(ns, spark_root, duck_root, signal)
            print(f"{spark_root} {signal}: {time.monotonic() - began:.1f}s", file=sys.stderr)
    with open(out_path, "w") as f:
        json.dump(out, f)
    ns["spark"].stop()


main()
