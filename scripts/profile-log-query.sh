#!/usr/bin/env bash
# profile-log-query.sh: where serve's CPU goes for one Loki query. Loads
# LOGS logs into a fresh wirehouse serve (compare-log-reads.sh's load
# shape: wirehouse load --signal logs --transport http --batch 500
# --resources 10 --concurrency 2, one request a second of data), restarts
# it with compaction off and Go's profiles on, then asks QUERY (LogQL)
# over the data's range again and again while a CPU profile of SECONDS
# is taken. Printed: the queries made, their mean wall time and serve's
# CPU a query (/proc/PID/stat), and the profile's top functions by
# cumulative time; the profile is kept at OUT (default
# /tmp/profile-log-query.pprof) for go tool pprof.
#
# A metric query (one that starts with a function, as topk(...) does)
# is asked of /loki/api/v1/query at the end of the range; a log query
# of /loki/api/v1/query_range, limit 1000, newest first.
#
# Usage: scripts/profile-log-query.sh QUERY [LOGS [SECONDS [OUT]]]
#        (default 1500000 logs, 15 s)
# Text on stdout, progress on stderr. Not a comparison: for finding
# where a query's time goes; the side-by-side and A/B scripts measure.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
query=$1 logs=${2:-1500000} secs=${3:-15} out=${4:-/tmp/profile-log-query.pprof}
harness profile-log-query

log "building wirehouse"
go build -o "$work/wirehouse" ./cmd/wirehouse
grpc=$(port) http=$(port) admin=$(port)
serve() { # serve EXTRA...: start serve on the data directory, set pid
	"$work/wirehouse" serve --data-dir "$work/data" --grpc-listen "127.0.0.1:$grpc" --http-listen "127.0.0.1:$http" \
		--admin-listen "127.0.0.1:$admin" --jaeger-storage-listen "" --log-level warn "$@" 2>>"$work/serve.log" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 600); do curl -sf "http://127.0.0.1:$admin/readyz" >/dev/null && return; sleep 0.1; done
	log "serve did not start"
	cat "$work/serve.log" >&2
	exit 1
}

requests=$(((logs + 499) / 500))
log "loading $((requests * 500)) logs"
serve
t0=$(date +%s)
"$work/wirehouse" load --signal logs --transport http --endpoint "http://127.0.0.1:$http" --count "$requests" \
	--variants "$requests" --batch 500 --resources 10 --concurrency 2 --quiet --json >/dev/null
until [ "$(curl -sf "http://127.0.0.1:$admin/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')" -ge $((requests * 500)) ]; do
	sleep 0.5
done
kill "$pid"
wait "$pid" 2>/dev/null || true

serve --lake-compact=false --admin-pprof
start=$((t0 - requests - 10)) end=$((t0 + 10))
ask() {
	if [[ $query =~ ^[a-z_]+\( ]]; then
		curl -sf -G "http://127.0.0.1:$admin/loki/api/v1/query" --data-urlencode "query=$query" --data-urlencode "time=$end"
	else
		curl -sf -G "http://127.0.0.1:$admin/loki/api/v1/query_range" --data-urlencode "query=$query" \
			--data-urlencode "start=$start" --data-urlencode "end=$end" --data-urlencode limit=1000 --data-urlencode direction=backward
	fi
}
ask >/dev/null || { log "the query failed: $(ask 2>&1 | head -c 300)"; exit 1; }
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
log "profiling $secs s of: $query"
curl -sf -o "$out" "http://127.0.0.1:$admin/debug/pprof/profile?seconds=$secs" &
prof=$!
n=0 c0=$(cpu) w0=$(date +%s%N)
while kill -0 "$prof" 2>/dev/null; do
	ask >/dev/null
	n=$((n + 1))
done
w1=$(date +%s%N) c1=$(cpu)
wait "$prof"
hz=$(getconf CLK_TCK)
echo "$n queries: $(((w1 - w0) / 1000000 / n)) ms each (wall, curl included), serve's CPU $(((c1 - c0) * 1000 / hz / n)) ms a query"
echo
go tool pprof -top -cum -nodecount=40 "$work/wirehouse" "$out" 2>/dev/null | sed -n '1,50p'
