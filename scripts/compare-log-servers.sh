#!/usr/bin/env bash
# compare-log-servers.sh: the same OTLP/gRPC logs load against wirehouse
# serve (spool with its default fsync policy, then Parquet in the lake)
# and the OpenTelemetry Collector v0.162.0 (otlpreceiver -> debug
# exporter, built with ocb from tools/lbcol/logcol-config.yaml), measured
# in logs per second of the server's own CPU time, all of its work
# counted to process exit: each server runs under GNU time, which reports
# its user+system time and peak RSS when it exits. wirehouse is stopped
# (SIGTERM) only once its lake holds every acknowledged log
# (wirehouse_lake_rows_total), so the Parquet writing is counted; the
# Collector's debug exporter works inside the request.
#
# Load: wirehouse load --signal logs --batch 500 --concurrency 2, REQUESTS
# requests (synth logs, 10 resources per request).
#
# Usage: scripts/compare-log-servers.sh [REQUESTS [RUNS]]
# WIREHOUSE_ENV="GOGC=50" (say) sets environment variables for wirehouse
# serve alone, to measure the runtime's memory/CPU trade-off.
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-2000}
runs=${2:-2}
bin=$PWD/bin/logcompare
work=$(mktemp -d /tmp/compare-logs.XXXXXX)
mkdir -p "$bin"
log() { echo "compare-logs: $*" >&2; }
trap 'rm -rf "$work"' EXIT

log "building wirehouse and the Collector (tools/lbcol/logcol-config.yaml)"
go build -o "$bin/wirehouse" ./cmd/wirehouse
(cd tools/lbcol && go tool builder --config logcol-config.yaml >"$work/ocb.log" 2>&1) || { cat "$work/ocb.log" >&2; exit 1; }
cp "$bin/logcol-src/logcol" "$bin/logcol"

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# run SERVER prints a table row.
run() {
	local server=$1 g a pid out accepted
	g=$(port) a=$(port)
	rm -rf "$work/data"
	if [ "$server" = wirehouse ]; then
		env ${WIREHOUSE_ENV:-} /usr/bin/time -f "%U %S %M" -o "$work/time" "$bin/wirehouse" serve --data-dir "$work/data" \
			--grpc-listen 127.0.0.1:$g --http-listen "" --admin-listen 127.0.0.1:$a --jaeger-storage-listen "" \
			--log-level warn 2>"$work/server.log" &
	else
		cat >"$work/col.yaml" <<-EOF
		receivers:
		  otlp:
		    protocols:
		      grpc: {endpoint: 127.0.0.1:$g}
		exporters:
		  debug: {verbosity: basic}
		service:
		  telemetry:
		    metrics: {level: none}
		    logs: {level: warn}
		  pipelines:
		    logs:
		      receivers: [otlp]
		      exporters: [debug]
		EOF
		/usr/bin/time -f "%U %S %M" -o "$work/time" "$bin/logcol" --config "$work/col.yaml" >/dev/null 2>"$work/server.log" &
	fi
	pid=$!
	for _ in $(seq 100); do
		"$bin/wirehouse" load --signal logs --endpoint 127.0.0.1:$g --count 1 --batch 1 --quiet --json >/dev/null 2>&1 && break
		sleep 0.2
	done
	out=$("$bin/wirehouse" load --signal logs --endpoint 127.0.0.1:$g --count "$requests" --batch 500 \
		--resources 10 --concurrency 2 --quiet --json)
	accepted=$(echo "$out" | jq -r .records_accepted)
	if [ "$server" = wirehouse ]; then
		local want=$((accepted + 1)) have=0 deadline=$(($(date +%s) + 300))
		while :; do
			have=$(curl -sf "http://127.0.0.1:$a/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')
			[ "$have" -ge "$want" ] && break
			if [ "$(date +%s)" -gt "$deadline" ]; then log "lake stalled at $have of $want rows"; break; fi
			sleep 0.2
		done
	fi
	kill -TERM "$(pgrep -P $pid)" 2>/dev/null || kill -TERM $pid
	wait $pid 2>/dev/null || true
	read -r user sys rss <"$work/time"
	awk -v s="$server" -v n="$accepted" -v u="$user" -v y="$sys" -v r="$rss" 'BEGIN {
		c = u + y; printf "| %s | %d | %.2f | %.0f | %d |\n", s, n, c, n / c, r / 1024 }'
	log "$server: $accepted logs, $(awk -v u="$user" -v y="$sys" 'BEGIN {print u + y}') CPU-s"
}

echo "| server | logs accepted | server CPU-s (to exit) | logs per CPU-s | peak RSS MiB |"
echo "|---|---|---|---|---|"
for _ in $(seq "$runs"); do
	run wirehouse
	run collector
done
