#!/usr/bin/env bash
# trace-lookup-cost.sh: what one trace-by-id lookup costs wirehouse serve,
# alone: SPANS spans (wirehouse load --signal traces, batches of 500, 10
# resources) into a fresh serve, wait until its lake holds them all, take
# up to 50 trace ids from a search, look each up once to warm up, then
# ROUNDS more times; print the server's CPU and the wall time per lookup
# (curl, one at a time) and the lake's bytes. For A/B of a change to the
# trace read path: run it with two builds (BIN=path to a wirehouse binary;
# default: built from this tree). The side-by-side comparison with Jaeger
# is compare-trace-reads.sh.
#
# Usage: scripts/trace-lookup-cost.sh [SPANS [ROUNDS]]   (default 100000 6)
set -euo pipefail
cd "$(dirname "$0")/.."
spans=${1:-100000}
rounds=${2:-6}
work=$(mktemp -d /tmp/trace-lookup-cost.XXXXXX)
bin=${BIN:-$work/wirehouse}
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
[ -n "${BIN:-}" ] || go build -o "$bin" ./cmd/wirehouse
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }
g=$(port) h=$(port) a=$(port)
"$bin" serve --data-dir "$work/data" --grpc-listen 127.0.0.1:$g --http-listen 127.0.0.1:$h \
	--admin-listen 127.0.0.1:$a --jaeger-storage-listen "" --log-level warn 2>"$work/serve.log" &
pid=$!
for i in $(seq 300); do curl -sf "http://127.0.0.1:$a/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
requests=$(((spans + 499) / 500))
"$bin" load --signal traces --transport http --endpoint http://127.0.0.1:$h --count $requests \
	--variants $requests --batch 500 --resources 10 --concurrency 2 --quiet >/dev/null
for i in $(seq 1200); do
	have=$(curl -sf "http://127.0.0.1:$a/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')
	[ "$have" -ge $((requests * 500)) ] && break
	sleep 0.5
done
ids=$(curl -sf "http://127.0.0.1:$a/jaeger/api/traces?service=checkout&limit=50&lookback=6h" | jq -r '.data[].traceID')
n=$(echo "$ids" | wc -w)
[ "$n" -gt 0 ] || { echo "no trace found" >&2; exit 1; }
for id in $ids; do curl -sf -o /dev/null "http://127.0.0.1:$a/jaeger/api/traces/$id"; done
cpu() { awk '{print $14 + $15}' /proc/$pid/stat; }
c0=$(cpu) t0=$(date +%s%N)
for r in $(seq "$rounds"); do for id in $ids; do curl -sf -o /dev/null "http://127.0.0.1:$a/jaeger/api/traces/$id"; done; done
c1=$(cpu) t1=$(date +%s%N)
hz=$(getconf CLK_TCK)
awk -v n=$((n * rounds)) -v c=$((c1 - c0)) -v hz="$hz" -v w=$((t1 - t0)) -v b="$(du -sb "$work/data/lake" | cut -f1)" -v s=$((requests * 500)) \
	'BEGIN { printf "| spans | lookups | server CPU ms a lookup | wall ms a lookup | lake bytes |\n|--:|--:|--:|--:|--:|\n| %d | %d | %.2f | %.2f | %d |\n", s, n, c * 1000 / hz / n, w / 1e6 / n, b }'
