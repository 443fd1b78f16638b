#!/usr/bin/env bash
# trace-metrics-cardinality.sh: the trace metrics' cardinality bound under
# a load of distinct span names, beside the same load with them off: for
# wirehouse serve with trace metrics (flushed every 2 s) and without
# (--trace-metrics=false), each on a fresh data directory, tools/spannames
# sends REQUESTS requests of 1000 server spans of one service, every span
# with a new name (default 100: 100,000 names). With trace metrics on,
# the script fails unless the store holds exactly the bound's 2,000
# span-metric series plus one overflow series, the overflow series counts
# every other span (PromQL), and wirehouse_tracemetrics_overflow_spans_total
# says the same. The table gives each server's CPU-s and peak RSS.
#
# Usage: scripts/trace-metrics-cardinality.sh [REQUESTS]
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
requests=${1:-100}
spans=$((requests * 1000))
bound=2000
harness trace-metrics-cardinality
log "building wirehouse and spannames"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/spannames" ./tools/spannames
tck=$(getconf CLK_TCK)
query() { curl -sf "http://127.0.0.1:$2/api/v1/query" --data-urlencode "query=$1" | jq -r '.data.result[0].value[1] // "0"'; }
metric() { curl -sf "http://127.0.0.1:$2/metrics" | awk -v m="$1" '$1 == m {print $2}'; }

echo "| server | spans | series | overflow spans | server CPU-s | peak RSS MiB |"
echo "|---|--:|--:|--:|--:|--:|"
for server in wirehouse wirehouse-no-trace-metrics; do
	dir=$work/data-$server
	h=$(port) a=$(port)
	extra=(--trace-metrics-flush-interval 2s)
	[ "$server" = wirehouse-no-trace-metrics ] && extra=(--trace-metrics=false)
	"$bin/wirehouse" serve --data-dir "$dir" --grpc-listen "" --http-listen 127.0.0.1:$h --admin-listen 127.0.0.1:$a \
		--jaeger-storage-listen "" --log-level warn "${extra[@]}" 2>"$work/server.log" &
	pid=$!
	pids+=($pid)
	for i in $(seq 300); do curl -sf "http://127.0.0.1:$a/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
	log "$server: $spans spans with distinct names"
	"$bin/spannames" --endpoint "http://127.0.0.1:$h/v1/traces" --requests "$requests" >&2
	series=- overflow=-
	if [ "$server" = wirehouse ]; then
		for i in $(seq 600); do
			[ "$(query 'sum(traces_span_metrics_calls_total)' $a)" = "$spans" ] && break
			[ "$i" = 600 ] && { log "the span metrics never counted $spans spans"; exit 1; }
			sleep 0.1
		done
		series=$(query 'count(traces_span_metrics_calls_total)' $a)
		overflow=$(query 'sum(traces_span_metrics_calls_total{otel_metric_overflow="true"})' $a)
		counter=$(metric wirehouse_tracemetrics_overflow_spans_total $a)
		want=$((spans - bound))
		if [ "$series" != $((bound + 1)) ] || [ "$overflow" != "$want" ] || [ "$counter" != "$want" ]; then
			log "series $series (want $((bound + 1))), overflow series $overflow and counter $counter (want $want)"
			exit 1
		fi
	else
		sleep 5
	fi
	cpu=$(awk -v t="$tck" '{printf "%.2f", ($14 + $15) / t}' "/proc/$pid/stat")
	rss=$(awk '/^VmHWM:/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
	kill $pid
	wait $pid 2>/dev/null || true
	echo "| $server | $spans | $series | $overflow | $cpu | $rss |"
done
