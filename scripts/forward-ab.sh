#!/usr/bin/env bash
# forward-ab.sh: gateway CPU of two or more wirehouse builds on the same
# forwarding load, interleaved, for A/B checks of a change (a smaller,
# quicker relative of forward-bench.sh, with no Collector).
#
# For each round and each binary: serve --store none with one destination
# over three sinks (tools/grpcecho), 3,000 requests of 1,000 records of
# SIGNAL (10 resources each, 4 workers) over OTLP/gRPC, the clock stopped
# when the sinks hold every record acknowledged. Prints per run: the
# gateway's CPU in clock ticks (user+system, /proc/<pid>/stat), its
# voluntary context switches, its peak RSS in KiB and how many records
# the spool's consumers took as they were appended.
#
# Usage: scripts/forward-ab.sh ROUNDS SIGNAL KEY BIN...
#   e.g. go build -o /tmp/a ./cmd/wirehouse; (change); go build -o /tmp/b ./cmd/wirehouse
#        scripts/forward-ab.sh 3 logs service /tmp/a /tmp/b
# PROF=file takes a 6 s CPU profile of the first run.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=$1 sig=$2 key=$3
shift 3
bin=$PWD/bin/fwdbench
mkdir -p "$bin"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/grpcecho" ./tools/grpcecho
work=$(mktemp -d /tmp/forward-ab.XXXXXX)
sinks=(127.0.0.1:24317 127.0.0.1:24327 127.0.0.1:24337)
stats=(127.0.0.1:24318 127.0.0.1:24328 127.0.0.1:24338)
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for i in 0 1 2; do
	"$bin/grpcecho" --listen "${sinks[$i]}" --stats-listen "${stats[$i]}" 2>/dev/null &
	pids+=($!)
done
for s in "${stats[@]}"; do
	for _ in $(seq 100); do curl -sf -o /dev/null "http://$s/stats" && break; sleep 0.1; done
done
received() {
	local n=0
	for s in "${stats[@]}"; do n=$((n + $(curl -sf "http://$s/stats" | jq -r ".$sig"))); done
	echo $n
}
cat >"$work/w.yaml" <<-EOT
store: {logs: false, traces: false, metrics: false}
forward:
  - name: backends
    signals: [$sig]
    endpoints: [${sinks[0]}, ${sinks[1]}, ${sinks[2]}]
    routing_key: {$sig: $key}
EOT
gw=127.0.0.1:24417 admin=127.0.0.1:24419
prof=${PROF:-}
for _ in $(seq "$rounds"); do
	for b in "$@"; do
		rm -rf "$work/data"
		"$b" serve --config "$work/w.yaml" --data-dir "$work/data" --grpc-listen $gw --http-listen "" \
			--admin-listen $admin --admin-pprof --jaeger-storage-listen "" >/dev/null 2>"$work/gw.log" &
		pid=$!
		for _ in $(seq 100); do
			"$bin/wirehouse" load --signal "$sig" --endpoint $gw --count 1 --batch 10 --quiet --json >/dev/null 2>&1 && break
			sleep 0.2
		done
		sleep 1
		before=$(received) c0=$(awk '{print $14+$15}' "/proc/$pid/stat")
		ppid=
		if [ -n "$prof" ]; then
			curl -s -o "$prof" "http://$admin/debug/pprof/profile?seconds=6" & ppid=$!
		fi
		acc=$("$bin/wirehouse" load --signal "$sig" --endpoint $gw --count 3000 --batch 1000 --resources 10 \
			--concurrency 4 --quiet --json | jq -r .records_accepted)
		while [ $(($(received) - before)) -lt "$acc" ]; do sleep 0.05; done
		c1=$(awk '{print $14+$15}' "/proc/$pid/stat")
		cs=$(cat /proc/"$pid"/task/*/status | awk '/^voluntary_ctxt_switches/{s+=$2} END{print s}')
		[ -n "$ppid" ] && wait "$ppid" && prof=
		tapped=$(curl -s "http://$admin/metrics" | awk '/^wirehouse_spool_tapped_total/{print $2}')
		echo "$b ticks=$((c1 - c0)) ctxsw=$cs rss_kib=$(awk '/VmHWM/{print $2}' "/proc/$pid/status") tapped=${tapped:-0}"
		kill "$pid"
		wait "$pid" 2>/dev/null || true
	done
done
