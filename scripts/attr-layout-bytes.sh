#!/usr/bin/env bash
# attr-layout-bytes.sh: what the record attributes of a lake's logs files
# would take in other layouts, written by DuckDB (its Parquet writer:
# zstd, dictionaries where they pay, row groups of 131,072) from the same
# rows: the attributes map as the lake holds it (keys in the order sent),
# the map with its keys sorted, and one column per key; with the body,
# the times and the rest for scale. Bytes per row of each, and the lake's
# own bytes per row for its columns (parquet_metadata).
#
# Usage: scripts/attr-layout-bytes.sh LAKE_DIR [FILES]   (default 8 files)
# LAKE_DIR is a lake (`<data-dir>/lake` of wirehouse serve). Needs
# bin/pyenv (make peers).
set -euo pipefail
cd "$(dirname "$0")/.."
lake=${1:?usage: scripts/attr-layout-bytes.sh LAKE_DIR [FILES]}
files=${2:-8}
py=$PWD/bin/pyenv/bin/python
[ -x "$py" ] || { echo "attr-layout-bytes: $py missing: make peers" >&2; exit 1; }
work=$(mktemp -d /tmp/attr-layout.XXXXXX)
trap 'rm -rf "$work"' EXIT
"$py" - "$lake" "$files" "$work" <<'EOF'
import duckdb, glob, os, sys
lake, nfiles, work = sys.argv[1], int(sys.argv[2]), sys.argv[3]
files = sorted(f for f in glob.glob(os.path.join(lake, 'logs', '*', '*', '*', '*.parquet')) if not os.path.basename(f).startswith('.'))[:nfiles]
if not files:
    sys.exit(f'attr-layout-bytes: no logs files under {lake}')
c = duckdb.connect()
c.sql(f"create table t as select * from read_parquet({files})")
n = c.sql("select count(*) from t").fetchall()[0][0]
keys = [r[0] for r in c.sql("select distinct unnest(map_keys(attributes)) from t order by 1").fetchall()]
print(f"{len(files)} files, {n} rows, {len(keys)} distinct attribute keys\n")
print("| layout (DuckDB's writer) | bytes a row |\n|---|--:|")
def size(q, name):
    out = os.path.join(work, 'x.parquet')
    c.sql(f"copy ({q}) to '{out}' (format parquet, compression zstd, row_group_size 131072)")
    print(f"| {name} | {os.path.getsize(out) / n:.1f} |")
size("select attributes from t", "attributes map, keys in the order sent (the lake's layout)")
size("select attributes, attribute_types from t", "the same with attribute_types")
size("select map_from_entries(list_sort(map_entries(attributes))) from t", "attributes map, keys sorted")
cols = ", ".join(f"attributes['{k}'] as \"{k}\"" for k in keys)
size(f"select {cols} from t", f"one column a key ({len(keys)} columns)")
size("select body from t", "body")
size("select timestamp, observed_timestamp from t", "timestamp, observed_timestamp")
size("select * exclude (attributes, attribute_types) from t", "every other column")
print("\n| the lake's own column | bytes a row |\n|---|--:|")
for name, b in c.sql(f"select path_in_schema, sum(total_compressed_size) from parquet_metadata({files}) group by 1 order by 2 desc limit 8").fetchall():
    print(f"| {name} | {b / n:.1f} |")
tot = sum(os.path.getsize(f) for f in files)
print(f"| (the files in all, metadata included) | {tot / n:.1f} |")
EOF
