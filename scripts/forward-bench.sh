#!/usr/bin/env bash
# forward-bench.sh: a gateway sharding OTLP over three downstream
# endpoints, wirehouse serve against the OpenTelemetry Collector
# (otlpreceiver -> loadbalancingexporter v0.161.0, built with ocb from
# tools/lbcol/builder-config.yaml), on the
# same load, in one run.
#
# Three sinks (tools/grpcecho --stats-listen: they acknowledge and count
# records with otlpwire) stand for the backends. For each case and each
# gateway, `wirehouse load` sends REQUESTS requests of BATCH records (10
# resources each, 4 workers) over OTLP/gRPC; the clock stops when the
# sinks have received every record the gateway acknowledged (delivery,
# not acknowledgement). Gateway CPU is user+system from /proc/<pid>/stat
# over that span; RSS is its peak (VmHWM). Both gateways send
# uncompressed OTLP/gRPC (the Collector's otlp exporter defaults to gzip:
# set to none here, as wirehouse's default). wirehouse serve stores
# nothing (--store none) but spools every request to disk first, with its
# default fsync every 100 ms; the Collector queues in memory.
#
# Usage: scripts/forward-bench.sh [REQUESTS [RUNS [BATCH]]]
# (BATCH records per request, default 1000)
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-1000}
runs=${2:-1}
batch=${3:-1000}
bin=$PWD/bin/fwdbench
work=$(mktemp -d /tmp/forward-bench.XXXXXX)
mkdir -p "$bin"
log() { echo "forward-bench: $*" >&2; }
log "building wirehouse, grpcecho and the Collector (tools/lbcol)"
go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/grpcecho" ./tools/grpcecho
(cd tools/lbcol && go tool builder --config builder-config.yaml >"$work/ocb.log" 2>&1) || { cat "$work/ocb.log" >&2; exit 1; }
cp "$bin/lbcol-src/lbcol" "$bin/lbcol"

pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Fixed ports below Linux's ephemeral range.
sinks=(127.0.0.1:24317 127.0.0.1:24327 127.0.0.1:24337)
stats=(127.0.0.1:24318 127.0.0.1:24328 127.0.0.1:24338)
for i in 0 1 2; do
	"$bin/grpcecho" --listen "${sinks[$i]}" --stats-listen "${stats[$i]}" 2>"$work/sink$i.log" &
	pids+=($!)
done
for s in "${stats[@]}"; do
	for _ in $(seq 100); do curl -sf -o /dev/null "http://$s/stats" && break; sleep 0.1; done
done
received() { # signal -> records the three sinks hold
	local n=0
	for s in "${stats[@]}"; do n=$((n + $(curl -sf "http://$s/stats" | jq -r ".$1"))); done
	echo $n
}
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; } # clock ticks
hwm() { awk '/VmHWM/{print $2}' "/proc/$1/status"; }  # KiB
tck=$(getconf CLK_TCK)
gw=127.0.0.1:24417

start_gateway() { # impl signal key -> pid
	local impl=$1 sig=$2 key=$3
	if [ "$impl" = wirehouse ]; then
		cat >"$work/wirehouse.yaml" <<-EOF
		store: {logs: false, traces: false, metrics: false}
		forward:
		  - name: backends
		    signals: [$sig]
		    endpoints: [${sinks[0]}, ${sinks[1]}, ${sinks[2]}]
		    routing_key: {$sig: $key}
		EOF
		rm -rf "$work/data"
		"$bin/wirehouse" serve --config "$work/wirehouse.yaml" --data-dir "$work/data" --grpc-listen $gw \
			--http-listen "" --admin-listen 127.0.0.1:24419 --jaeger-storage-listen "" >/dev/null 2>"$work/gw.log" &
	else
		cat >"$work/lbcol.yaml" <<-EOF
		receivers:
		  otlp:
		    protocols:
		      grpc: {endpoint: $gw}
		exporters:
		  loadbalancing:
		    routing_key: $key
		    protocol:
		      otlp:
		        tls: {insecure: true}
		        compression: none
		    resolver:
		      static:
		        hostnames: [${sinks[0]}, ${sinks[1]}, ${sinks[2]}]
		service:
		  telemetry:
		    metrics: {level: none}
		  pipelines:
		    $sig:
		      receivers: [otlp]
		      exporters: [loadbalancing]
		EOF
		"$bin/lbcol" --config "$work/lbcol.yaml" >/dev/null 2>"$work/gw.log" &
	fi
	echo $!
}

echo "| case | gateway | records delivered | gateway CPU-s | records per CPU-s | peak RSS MiB | wall s |"
echo "|---|---|---|---|---|---|---|"
for run in $(seq "$runs"); do
	for c in logs/resource logs/service traces/traceID; do
		sig=${c%/*}
		key=${c#*/}
		for impl in wirehouse collector; do
			pid=$(start_gateway $impl "$sig" "$key")
			pids+=("$pid")
			for _ in $(seq 100); do
				"$bin/wirehouse" load --signal "$sig" --endpoint $gw --count 1 --batch 10 --quiet --json >/dev/null 2>&1 && break
				sleep 0.2
			done
			# the warm-up request above is delivered before the clock starts
			sleep 1
			before=$(received "$sig")
			c0=$(cpu "$pid")
			t0=$(date +%s.%N)
			out=$("$bin/wirehouse" load --signal "$sig" --endpoint $gw --count "$requests" --batch "$batch" \
				--resources 10 --concurrency 4 --quiet --json)
			accepted=$(echo "$out" | jq -r .records_accepted)
			deadline=$(($(date +%s) + 300))
			while [ $(($(received "$sig") - before)) -lt "$accepted" ]; do
				if [ "$(date +%s)" -gt "$deadline" ]; then
					log "$impl $c: delivery stalled at $(($(received "$sig") - before)) of $accepted"
					break
				fi
				sleep 0.05
			done
			t1=$(date +%s.%N)
			c1=$(cpu "$pid")
			delivered=$(($(received "$sig") - before))
			rss=$(hwm "$pid")
			kill "$pid"
			wait "$pid" 2>/dev/null || true
			cpus=$(echo "$c0 $c1 $tck" | awk '{printf "%.2f", ($2-$1)/$3}')
			echo "| $c | $impl | $delivered of $accepted | $cpus | $(echo "$delivered $cpus" | awk '{printf "%.0f", $1/$2}') | $((rss / 1024)) | $(echo "$t0 $t1" | awk '{printf "%.1f", $2-$1}') |"
			log "run $run $c $impl: $delivered records in $cpus CPU-s"
		done
	done
done
