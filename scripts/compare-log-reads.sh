#!/usr/bin/env bash
# compare-log-reads.sh: the same log queries against wirehouse serve (its
# Loki API, LogQL) and VictoriaLogs v1.52.1 (its LogsQL API) holding the
# same logs, side by side in one run (tools/readcompare logs): needles
# (a rare token, a frequent token, a phrase, a regex, an attribute
# filter) with and without a stream selector, volume by level, counts by
# service over 30 min and 6 h, topk. Each query runs once to warm up and
# then RUNS times on each server (fewer, at least 3, once its repetitions
# have taken a minute); the two answers must be equal or the script
# fails, after the table. The table gives P50/P99 latency, server CPU a query
# (/proc/PID/stat before and after its repetitions) and the ratio of the
# P50s; then each server's peak RSS (VmHWM, ingestion included) and the
# bytes its data directory takes on disk (wirehouse's: spool and lake).
# The queries start once both servers are idle (readcompare waits).
#
# Load: LOGS logs of wirehouse load --signal logs --transport http
# --batch 500 --resources 10, every request distinct (--variants =
# --count), one request a second of data ending at the start of the load,
# sent once through `readcompare tee`, which gives each request to both
# servers (VictoriaLogs with _stream_fields=service.name, its stream
# being wirehouse's service_name label) and acknowledges it only when
# both did. The queries start when wirehouse's lake holds every log
# (wirehouse_lake_rows_total) and VictoriaLogs counts them all.
#
# Usage: scripts/compare-log-reads.sh [LOGS [RUNS]]   (default 1500000 20)
# Markdown on stdout, progress on stderr. VictoriaLogs is built into
# bin/readcompare on first use (go install, a minute or two).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
logs=${1:-1500000}
runs=${2:-20}
batch=500
harness compare-log-reads

log "building wirehouse, readcompare and (if missing) VictoriaLogs v1.52.1"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/readcompare" ./tools/readcompare
if [ ! -x "$bin/victoria-logs" ]; then
	GOBIN=$bin go install github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v1.52.1
fi

g=$(port) h=$(port) a=$(port) v=$(port) t=$(port)

"$bin/wirehouse" serve --data-dir "$work/wirehouse" --grpc-listen 127.0.0.1:$g --http-listen 127.0.0.1:$h \
	--admin-listen 127.0.0.1:$a --jaeger-storage-listen "" --log-level warn 2>"$work/wirehouse.log" &
wpid=$!
pids+=($wpid)
"$bin/victoria-logs" -storageDataPath="$work/victorialogs" -httpListenAddr=127.0.0.1:$v -loggerLevel=WARN \
	2>"$work/victorialogs.log" &
vpid=$!
pids+=($vpid)
for u in http://127.0.0.1:$a/readyz http://127.0.0.1:$v/health; do
	for i in $(seq 300); do curl -sf "$u" >/dev/null 2>&1 && break; [ "$i" = 300 ] && { log "$u not ready"; exit 1; }; sleep 0.1; done
done
"$bin/readcompare" tee --listen 127.0.0.1:$t --to http://127.0.0.1:$h/v1/logs \
	--to "http://127.0.0.1:$v/insert/opentelemetry/v1/logs?_stream_fields=service.name" 2>"$work/tee.log" &
pids+=($!)
for i in $(seq 100); do grep -q listening "$work/tee.log" && break; [ "$i" = 100 ] && { cat "$work/tee.log" >&2; exit 1; }; sleep 0.1; done

requests=$(((logs + batch - 1) / batch))
log "loading $((requests * batch)) logs ($requests requests of $batch) into both"
t0=$(date +%s)
out=$("$bin/wirehouse" load --signal logs --transport http --endpoint http://127.0.0.1:$t --count $requests \
	--variants $requests --batch $batch --resources 10 --concurrency 2 --quiet --json)
accepted=$(echo "$out" | jq -r .records_accepted)
if [ "$accepted" != $((requests * batch)) ]; then
	log "only $accepted of $((requests * batch)) logs accepted by both: $out"
	cat "$work/tee.log" >&2
	exit 1
fi

# Wait until wirehouse's lake and VictoriaLogs' searches hold every log.
deadline=$(($(date +%s) + 600))
while :; do
	have=$(curl -sf "http://127.0.0.1:$a/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')
	[ "$have" -ge "$accepted" ] && break
	[ "$(date +%s)" -gt "$deadline" ] && { log "wirehouse's lake stalled at $have of $accepted rows"; exit 1; }
	sleep 0.5
done
while :; do
	have=$(curl -sf "http://127.0.0.1:$v/select/logsql/query" --data-urlencode 'query=* | count() n' | jq -r '.n // 0')
	[ "$have" -ge "$accepted" ] && break
	[ "$(date +%s)" -gt "$deadline" ] && { log "VictoriaLogs counts $have of $accepted logs"; exit 1; }
	sleep 0.5
done
log "both hold $accepted logs; querying ($runs runs a query)"

# The data: one request a second, the last at the start of the load.
rc=0
"$bin/readcompare" logs --wirehouse http://127.0.0.1:$a --wirehouse-pid $wpid \
	--peer http://127.0.0.1:$v --peer-pid $vpid --runs "$runs" \
	--start "$(date -u -d @$((t0 - requests - 10)) +%FT%TZ)" --end "$(date -u -d @$((t0 + 10)) +%FT%TZ)" || rc=$?

echo
echo "| server | logs | peak RSS MiB (VmHWM) | data directory MiB |"
echo "|---|--:|--:|--:|"
for s in "wirehouse $wpid $work/wirehouse" "wirehouse,_lake/_alone $wpid $work/wirehouse/lake" "VictoriaLogs $vpid $work/victorialogs"; do
	set -- $s
	rss=$(awk '/^VmHWM/ {print $2}' /proc/$2/status)
	disk=$(du -s -B1 "$3" | cut -f1)
	awk -v n="${1//_/ }" -v l="$accepted" -v r="$rss" -v d="$disk" 'BEGIN { printf "| %s | %d | %.0f | %.1f |\n", n, l, r / 1024, d / 1048576 }'
done
exit $rc
