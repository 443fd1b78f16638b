#!/usr/bin/env bash
# compare-trace-reads.sh: the same trace queries against wirehouse serve
# (its Jaeger API under /jaeger) and Jaeger v1.76.0 (the jaeger v2
# binary, Badger storage on disk, its query HTTP API) holding the same
# spans, side by side in one run (tools/readcompare traces): services,
# trace by id (40 ids spread over the data, 10 of its last two minutes),
# search by service, by service and a resource tag, by service and a span
# tag. Each query runs once to warm up and then RUNS times on each
# server (fewer, at least 3, once its repetitions have taken a minute);
# the two answers (the span ids of every trace) must be equal or the
# script fails, after the table. The table gives P50/P99 latency, server CPU a query
# (/proc/PID/stat before and after its repetitions) and the ratio of the
# P50s; then each server's peak RSS (VmHWM, ingestion included) and the
# bytes its data directory takes on disk (wirehouse's: spool and lake).
# The queries start once both servers are idle (readcompare waits, at
# most SETTLE, default 5m: a large load leaves both compacting).
#
# Load: SPANS spans of wirehouse load --signal traces --transport http
# --batch 500 --resources 10, every request distinct (--variants =
# --count), one request a second of data ending at the start of the load,
# sent once through `readcompare tee`, which gives each request to both
# servers (Jaeger's OTLP receiver, straight to its storage exporter with
# neither batch processor nor queue, so an acknowledged span is written)
# and acknowledges it only when both did. The queries start when
# wirehouse's lake holds every span (wirehouse_lake_rows_total) and
# Jaeger's exporter has sent them all to Badger.
#
# Usage: scripts/compare-trace-reads.sh [SPANS [RUNS]]   (default 1000000 20)
# Markdown on stdout, progress on stderr. Jaeger is bin/jaeger-v1.76.0,
# built by `make bin/jaeger-v1.76.0` if missing.
# WIREHOUSE_PROFILE=FILE writes a CPU profile of wirehouse over the
# queries' first minute (go tool pprof FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
. scripts/lib/jaeger-badger.sh
spans=${1:-1000000}
runs=${2:-20}
batch=500
jaeger=$PWD/bin/jaeger-v1.76.0
harness compare-trace-reads

log "building wirehouse, readcompare and (if missing) Jaeger v1.76.0"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/readcompare" ./tools/readcompare
[ -x "$jaeger" ] || make "$jaeger" >&2 # the Makefile names it by its absolute path

g=$(port) h=$(port) a=$(port) o=$(port) q=$(port) qg=$(port) m=$(port) t=$(port)

"$bin/wirehouse" serve --data-dir "$work/wirehouse" --grpc-listen 127.0.0.1:$g --http-listen 127.0.0.1:$h \
	--admin-listen 127.0.0.1:$a --jaeger-storage-listen "" --log-level warn ${WIREHOUSE_PROFILE:+--admin-pprof} 2>"$work/wirehouse.log" &
wpid=$!
pids+=($wpid)
mkdir -p "$work/jaeger/keys" "$work/jaeger/values"
jaeger_badger_config "$work/jaeger" $o $m $q $qg >"$work/jaeger.yaml"
"$jaeger" --config "$work/jaeger.yaml" >"$work/jaeger.log" 2>&1 &
jpid=$!
pids+=($jpid)
for u in http://127.0.0.1:$a/readyz http://127.0.0.1:$q/api/services; do
	for i in $(seq 300); do curl -sf "$u" >/dev/null 2>&1 && break; [ "$i" = 300 ] && { log "$u not ready"; tail "$work"/*.log >&2; exit 1; }; sleep 0.1; done
done
"$bin/readcompare" tee --listen 127.0.0.1:$t --to http://127.0.0.1:$h/v1/traces --to http://127.0.0.1:$o/v1/traces 2>"$work/tee.log" &
pids+=($!)
for i in $(seq 100); do grep -q listening "$work/tee.log" && break; [ "$i" = 100 ] && { cat "$work/tee.log" >&2; exit 1; }; sleep 0.1; done

requests=$(((spans + batch - 1) / batch))
log "loading $((requests * batch)) spans ($requests requests of $batch) into both"
t0=$(date +%s)
out=$("$bin/wirehouse" load --signal traces --transport http --endpoint http://127.0.0.1:$t --count $requests \
	--variants $requests --batch $batch --resources 10 --concurrency 2 --quiet --json)
accepted=$(echo "$out" | jq -r .records_accepted)
if [ "$accepted" != $((requests * batch)) ]; then
	log "only $accepted of $((requests * batch)) spans accepted by both: $out"
	cat "$work/tee.log" >&2
	exit 1
fi

# Wait until wirehouse's lake holds every span and Jaeger's exporter has
# written them all.
deadline=$(($(date +%s) + 600))
while :; do
	have=$(curl -sf "http://127.0.0.1:$a/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')
	[ "$have" -ge "$accepted" ] && break
	[ "$(date +%s)" -gt "$deadline" ] && { log "wirehouse's lake stalled at $have of $accepted rows"; exit 1; }
	sleep 0.5
done
while :; do
	have=$(curl -sf "http://127.0.0.1:$m/metrics" | awk '/^otelcol_exporter_sent_spans.*jaeger_storage_exporter/ {s += $NF} END {printf "%d", s}')
	[ "$have" -ge "$accepted" ] && break
	[ "$(date +%s)" -gt "$deadline" ] && { log "Jaeger's exporter sent $have of $accepted spans"; exit 1; }
	sleep 0.5
done
log "both hold $accepted spans; querying ($runs runs a query)"

# The data: one request a second, the last at the start of the load.
rc=0
if [ -n "${WIREHOUSE_PROFILE:-}" ]; then # a CPU profile of wirehouse over the queries' first minute
	curl -sf -o "$WIREHOUSE_PROFILE" "http://127.0.0.1:$a/debug/pprof/profile?seconds=60" &
fi
"$bin/readcompare" traces --wirehouse http://127.0.0.1:$a --wirehouse-pid $wpid \
	--peer http://127.0.0.1:$q --peer-pid $jpid --runs "$runs" --settle "${SETTLE:-5m}" \
	--start "$(date -u -d @$((t0 - requests - 10)) +%FT%TZ)" --end "$(date -u -d @$((t0 + 10)) +%FT%TZ)" || rc=$?

echo
echo "| server | spans | peak RSS MiB (VmHWM) | data directory MiB |"
echo "|---|--:|--:|--:|"
for s in "wirehouse $wpid $work/wirehouse" "wirehouse,_lake/_alone $wpid $work/wirehouse/lake" "Jaeger $jpid $work/jaeger"; do
	set -- $s
	rss=$(awk '/^VmHWM/ {print $2}' /proc/$2/status)
	disk=$(du -s -B1 "$3" | cut -f1) # allocated, not apparent: Badger preallocates its files
	awk -v n="${1//_/ }" -v l="$accepted" -v r="$rss" -v d="$disk" 'BEGIN { printf "| %s | %d | %.0f | %.1f |\n", n, l, r / 1024, d / 1048576 }'
done
exit $rc
