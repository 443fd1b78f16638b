#!/usr/bin/env bash
# compare-ingest.sh: what storing OTLP/HTTP logs or spans costs wirehouse
# serve and its peer, in records per server CPU-second, on the same load
# in one run: for logs wirehouse with its logs indexes (counts and body
# index, the default), wirehouse without them (--lake-no-indexes) and
# VictoriaLogs v1.52.1; for traces wirehouse with its trace-id index, without
# it (--lake-no-indexes), without the span metrics and service graph made
# on the way in (--trace-metrics=false) and Jaeger v1.76.0 on Badger.
# VARIANTS (default: as many as requests) sends that many distinct
# requests round robin: synth's requests each come from 10 new pods (new
# service.instance.id and k8s.pod.name), so every request is new
# resources to span metrics unless VARIANTS is small.
# SERVERS overrides the list (e.g. SERVERS="wirehouse
# wirehouse-no-trace-metrics" for the trace metrics' cost alone).
#
# Each server runs alone on a fresh data directory, in turn, RUNS rounds.
# Load: RECORDS records of wirehouse load --signal SIGNAL --transport
# http --batch 1000 --resources 10 --concurrency 2, every request
# distinct (--variants = --count), through `readcompare tee` with the
# server as its one target (VictoriaLogs with _stream_fields=service.name,
# as compare-log-reads.sh sends it). The server's CPU (user+system,
# /proc/PID/stat) is read before the load and again once it holds every
# acknowledged record and 5 s more have passed: wirehouse when its lake
# holds them (wirehouse_lake_rows_total: the Parquet writing counted,
# which waits for --lake-max-delay, the default minute, for the last
# file), VictoriaLogs when vl_rows_ingested_total says so, Jaeger when its
# storage exporter has sent them all. Every server must hold every record
# (VictoriaLogs' count() and the metrics above) or the script fails.
#
# Usage: scripts/compare-ingest.sh [logs|traces [RECORDS [RUNS]]]
#        (default logs 1500000 2)
# Markdown on stdout, progress on stderr. VictoriaLogs is built into
# bin/readcompare on first use (go install), Jaeger by make.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
. scripts/lib/jaeger-badger.sh
signal=${1:-logs}
records=${2:-1500000}
runs=${3:-2}
batch=1000
jaeger=$PWD/bin/jaeger-v1.76.0
harness compare-ingest

case $signal in
logs) servers="wirehouse wirehouse-no-indexes victorialogs" unit=logs ;;
traces) servers="wirehouse wirehouse-no-indexes wirehouse-no-trace-metrics jaeger" unit=spans ;;
*) log "signal $signal: want logs or traces"; exit 2 ;;
esac
servers=${SERVERS:-$servers}

log "building wirehouse, readcompare and the peer if missing"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/readcompare" ./tools/readcompare
if [ "$signal" = logs ] && [ ! -x "$bin/victoria-logs" ]; then
	GOBIN=$bin go install github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v1.52.1
fi
if [ "$signal" = traces ] && [ ! -x "$jaeger" ]; then
	make "$PWD/bin/jaeger-v1.76.0" >&2
fi

tck=$(getconf CLK_TCK)
cpu() { awk -v t="$tck" '{printf "%.3f", ($14 + $15) / t}' "/proc/$1/stat"; }
wait_url() {
	for i in $(seq 300); do curl -sf "$1" >/dev/null 2>&1 && return; sleep 0.1; done
	log "$1 not ready"; tail "$work"/*.log >&2; exit 1
}
# metric_sum URL AWK-PATTERN sums the matching samples' values.
metric_sum() { curl -sf "$1" | awk "$2"' {s += $NF} END {printf "%d", s}'; }

requests=$(((records + batch - 1) / batch))
want=$((requests * batch))

# run SERVER prints a table row: records, server CPU-s, records per CPU-s.
run() {
	local server=$1 dir=$work/data pid target stored a h v o m q
	rm -rf "$dir"
	mkdir -p "$dir"
	case $server in
	wirehouse*)
		local extra=()
		[ "$server" = wirehouse-no-indexes ] && extra=(--lake-no-indexes)
		[ "$server" = wirehouse-no-trace-metrics ] && extra=(--trace-metrics=false)
		h=$(port) a=$(port)
		"$bin/wirehouse" serve --data-dir "$dir" --grpc-listen "" --http-listen 127.0.0.1:$h --admin-listen 127.0.0.1:$a \
			--jaeger-storage-listen "" --log-level warn "${extra[@]}" 2>"$work/server.log" &
		pid=$!
		wait_url "http://127.0.0.1:$a/readyz"
		target=http://127.0.0.1:$h/v1/$signal
		stored() { metric_sum "http://127.0.0.1:$a/metrics" '/^wirehouse_lake_rows_total/'; }
		;;
	victorialogs)
		v=$(port)
		"$bin/victoria-logs" -storageDataPath="$dir" -httpListenAddr=127.0.0.1:$v -loggerLevel=WARN 2>"$work/server.log" &
		pid=$!
		wait_url "http://127.0.0.1:$v/health"
		target="http://127.0.0.1:$v/insert/opentelemetry/v1/logs?_stream_fields=service.name"
		stored() { metric_sum "http://127.0.0.1:$v/metrics" '/^vl_rows_ingested_total/'; }
		;;
	jaeger)
		o=$(port) m=$(port) q=$(port)
		mkdir -p "$dir/keys" "$dir/values"
		jaeger_badger_config "$dir" $o $m $q "$(port)" >"$work/jaeger.yaml"
		"$jaeger" --config "$work/jaeger.yaml" >"$work/server.log" 2>&1 &
		pid=$!
		wait_url "http://127.0.0.1:$q/api/services"
		target=http://127.0.0.1:$o/v1/traces
		stored() { metric_sum "http://127.0.0.1:$m/metrics" '/^otelcol_exporter_sent_spans.*jaeger_storage_exporter/'; }
		;;
	esac
	pids+=($pid)
	local t
	t=$(port)
	"$bin/readcompare" tee --listen 127.0.0.1:$t --to "$target" 2>"$work/tee.log" &
	local tee=$!
	pids+=($tee)
	for i in $(seq 100); do grep -q listening "$work/tee.log" && break; [ "$i" = 100 ] && { cat "$work/tee.log" >&2; exit 1; }; sleep 0.1; done

	local c0 c1 out accepted have deadline
	c0=$(cpu $pid)
	out=$("$bin/wirehouse" load --signal "$signal" --transport http --endpoint http://127.0.0.1:$t --count $requests \
		--variants ${VARIANTS:-$requests} --batch $batch --resources 10 --concurrency 2 --quiet --json)
	accepted=$(echo "$out" | jq -r .records_accepted)
	if [ "$accepted" != "$want" ]; then
		log "$server: only $accepted of $want records accepted: $out"
		exit 1
	fi
	deadline=$(($(date +%s) + 600))
	while :; do
		have=$(stored)
		[ "$have" -ge "$accepted" ] && break
		[ "$(date +%s)" -gt "$deadline" ] && { log "$server holds $have of $accepted records"; exit 1; }
		sleep 0.5
	done
	sleep 5
	c1=$(cpu $pid)
	if [ "$server" = wirehouse ] && [ "$signal" = traces ]; then # the trace metrics counted every span
		have=$(metric_sum "http://127.0.0.1:$a/metrics" '/^wirehouse_tracemetrics_spans_total/')
		[ "$have" = "$accepted" ] || { log "the trace metrics counted $have of $accepted spans"; exit 1; }
	fi
	if [ "$server" = victorialogs ]; then # what a query counts, after the CPU was read
		have=$(curl -sf "http://127.0.0.1:$v/select/logsql/query" --data-urlencode 'query=* | count() n' | jq -r '.n // 0')
		[ "$have" = "$accepted" ] || { log "VictoriaLogs counts $have of $accepted logs"; exit 1; }
	fi
	local rss
	rss=$(awk '/^VmHWM:/ {printf "%.0f", $2 / 1024}' "/proc/$pid/status")
	kill $tee $pid 2>/dev/null || true
	wait $tee $pid 2>/dev/null || true
	awk -v s="$server" -v n="$accepted" -v c0="$c0" -v c1="$c1" -v rss="$rss" \
		'BEGIN { printf "| %s | %d | %.2f | %.0f | %d |\n", s, n, c1 - c0, n / (c1 - c0), rss }'
}

echo "| server | $unit stored | server CPU-s | $unit per server CPU-s | peak RSS MiB |"
echo "|---|--:|--:|--:|--:|"
for r in $(seq "$runs"); do
	for s in $servers; do
		log "round $r: $s ($want $unit)"
		run "$s" | tee -a "$work/rows"
	done
done
echo
# Ratios of the rounds' means: wirehouse against the others.
awk -F'|' '{gsub(/ /, "", $2); n[$2]++; v[$2, n[$2]] = $5}
END {
	for (s in n) { m = 0; for (i = 1; i <= n[s]; i++) m += v[s, i]; avg[s] = m / n[s] }
	for (s in avg) if (s != "wirehouse") printf "wirehouse / %s, %s per CPU-s (mean of %d rounds): %.2fx\n", s, "'"$unit"'", n[s], avg["wirehouse"] / avg[s]
	if ("wirehouse-no-trace-metrics" in avg) printf "the trace metrics\x27 share of wirehouse\x27s ingest CPU (with / without - 1, per span): %.1f %%\n", 100 * (avg["wirehouse-no-trace-metrics"] / avg["wirehouse"] - 1)
	if ("wirehouse-no-indexes" in avg) printf "the lake indexes\x27 share of wirehouse\x27s ingest CPU (1 - with / without, per record): %.1f %%\n", 100 * (1 - avg["wirehouse"] / avg["wirehouse-no-indexes"])
}' "$work/rows"
