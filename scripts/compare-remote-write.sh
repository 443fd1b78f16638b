#!/usr/bin/env bash
# compare-remote-write.sh: the same Prometheus remote write 1.0 load
# against wirehouse serve and VictoriaMetrics, alternating, measured in
# samples accepted per second of the server's own CPU time (`wirehouse
# load --server-pid`: user+system from /proc/<pid>/stat, read at the first
# request and 6 s after the last response, so that deferred work counts).
#
# Load: wirehouse load --signal metrics --transport remote-write --batch
# 1000 --concurrency 2 for DURATION (snappy WriteRequests, one sample per
# series, the same series every round).
#
# A third server, "bare", is tools/grpcecho --http-listen: a bare Go
# net/http server that reads each body and answers 204, without even
# decompressing it: the floor of the transport on this machine.
#
# Usage: scripts/compare-remote-write.sh [DURATION [RUNS]]
# Markdown on stdout, progress on stderr. VictoriaMetrics v1.150.0 is
# built into ./bin/compare on first use (as compare-metric-servers.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
duration=${1:-15s}
runs=${2:-2}
bin=$PWD/bin/compare
mkdir -p "$bin"
log() { echo "compare-rw: $*" >&2; }
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/grpcecho" ./tools/grpcecho
if [ ! -x "$bin/victoria-metrics" ]; then
	log "building VictoriaMetrics v1.150.0"
	GOBIN=$bin go install github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@v1.150.0
fi
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

run() {
	local server=$1 dir pid a ep out
	dir=$(mktemp -d)
	a=$(port)
	if [ "$server" = wirehouse ]; then
		"$bin/wirehouse" serve --data-dir "$dir" --grpc-listen 127.0.0.1:$(port) --http-listen "" \
			--admin-listen 127.0.0.1:$a --jaeger-storage-listen "" --log-level warn 2>"$dir/log" &
		pid=$! ep=http://127.0.0.1:$a/api/v1/write
		for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$a/readyz" && break; sleep 0.1; done
	elif [ "$server" = bare ]; then
		"$bin/grpcecho" --listen 127.0.0.1:0 --http-listen 127.0.0.1:$a 2>"$dir/log" &
		pid=$! ep=http://127.0.0.1:$a/api/v1/write
		for _ in $(seq 100); do grep -q "bare OTLP/HTTP" "$dir/log" 2>/dev/null && break; sleep 0.1; done
	else
		"$bin/victoria-metrics" -storageDataPath "$dir/vm" -httpListenAddr 127.0.0.1:$a -loggerLevel ERROR >"$dir/log" 2>&1 &
		pid=$! ep=http://127.0.0.1:$a/api/v1/write
		for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$a/health" && break; sleep 0.1; done
	fi
	out=$("$bin/wirehouse" load --signal metrics --transport remote-write --endpoint "$ep" --batch 1000 \
		--concurrency 2 --duration "$duration" --server-pid $pid --quiet --json)
	kill $pid
	wait $pid 2>/dev/null || true
	rm -rf "$dir"
	echo "$out" | jq -r --arg s "$server" '"| \($s) | \(.records_accepted) | \(.server_cpu_ns / 1e7 | round / 100) | \(.records_per_server_cpu_second | round) |"'
	log "$server done"
}

echo "| server | samples accepted | server CPU-s | samples per server CPU-s |"
echo "|---|---|---|---|"
for _ in $(seq "$runs"); do
	run wirehouse
	run victoriametrics
	run bare
done
