#!/usr/bin/env bash
# lake-s3-throughput.sh: logs into the lake on an S3 bucket against the
# lake on the local disk, under the same load, on this machine.
#
# For each lake, a fresh `wirehouse serve` takes `wirehouse load --signal
# logs` (REQUESTS requests of 500 logs, 2 workers); the clock runs from
# the first request until the lake loader has written and committed
# every spooled record (wirehouse_lake_lag_records 0 on /metrics), so
# what is measured is delivery into Parquet files, not acknowledgement.
# The store is SeaweedFS (bin/weed-*, `make peers` builds it) on loopback,
# sharing the two cores with serve and the load generator, as the issue
# asks. Server CPU is user+system from /proc/<pid>/stat. One request
# first, off the clock, warms each lake up (SeaweedFS takes seconds to
# allocate a new bucket's volumes at its first write).
#
# Usage: scripts/lake-s3-throughput.sh [REQUESTS [RUNS]]
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-400}
runs=${2:-3}
bin=$PWD/bin/s3bench
work=$(mktemp -d /tmp/lake-s3-bench.XXXXXX)
mkdir -p "$bin" "$work/weed"
log() { echo "lake-s3: $*" >&2; }
weed=$(ls "$PWD"/bin/weed-* 2>/dev/null | head -1)
[ -x "$weed" ] || { log "no bin/weed-*: run make peers"; exit 1; }
go build -o "$bin/wirehouse" ./cmd/wirehouse

# Fixed ports below Linux's ephemeral range (32768 and up), so no
# outgoing connection holds one.
s3port=18433
"$weed" server -dir="$work/weed" -ip=127.0.0.1 -ip.bind=127.0.0.1 -s3 -s3.port=$s3port -s3.port.grpc=18434 \
	-master.port=18435 -master.port.grpc=18436 -volume.port=18437 -volume.port.grpc=18438 -filer.port=18439 \
	-filer.port.grpc=18440 -volume.max=0 -master.volumeSizeLimitMB=1024 >"$work/weed.log" 2>&1 &
weedpid=$!
pids=()
cleanup() { kill "${pids[@]}" 2>/dev/null || true; kill $weedpid 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:$s3port/ && break; sleep 0.5; done
kill -0 $weedpid 2>/dev/null || { log "weed exited:"; tail -5 "$work/weed.log" >&2; exit 1; }
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_REGION=us-east-1

cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
lag() { curl -sf "http://127.0.0.1:$1/metrics" | awk '$1=="wirehouse_lake_lag_records"{print $2}'; }

run() { # mode run -> "logs/s cpu_s"
	local mode=$1 n=$2 data="$work/data-$1-$2"
	local extra=(--lake-compact=false)
	if [ "$mode" = s3 ]; then
		for _ in $(seq 60); do curl -sf -X PUT "http://127.0.0.1:$s3port/bench-$n" >/dev/null && break; sleep 0.5; done
		extra+=(--lake-url "s3://bench-$n/lake" --lake-s3-endpoint "http://127.0.0.1:$s3port" --lake-s3-path-style)
	fi
	"$bin/wirehouse" serve --data-dir "$data" --grpc-listen 127.0.0.1:14317 --http-listen 127.0.0.1:14318 \
		--admin-listen 127.0.0.1:19090 --jaeger-storage-listen 127.0.0.1:0 --lake-max-delay 1s \
		"${extra[@]}" 2>"$work/serve-$mode-$n.log" &
	local pid=$!
	pids+=($pid)
	for _ in $(seq 100); do curl -sf -o /dev/null http://127.0.0.1:19090/metrics && break; sleep 0.1; done
	# Warm-up, off the clock: SeaweedFS allocates a new bucket's volumes
	# at its first write (seconds).
	"$bin/wirehouse" load --signal logs --batch 500 --count 1 --endpoint 127.0.0.1:14317 --quiet >/dev/null
	while [ "$(lag 19090)" != 0 ]; do sleep 0.02; done
	local c0 t0 t1 c1 w0 w1
	c0=$(cpu $pid)
	w0=$(cpu $weedpid)
	t0=$(date +%s.%N)
	"$bin/wirehouse" load --signal logs --batch 500 --concurrency 2 --count "$requests" --endpoint 127.0.0.1:14317 --quiet >/dev/null
	while [ "$(lag 19090)" != 0 ]; do sleep 0.02; done
	t1=$(date +%s.%N)
	c1=$(cpu $pid)
	w1=$(cpu $weedpid)
	kill $pid; wait $pid 2>/dev/null || true
	local tck; tck=$(getconf CLK_TCK)
	awk -v n=$((requests * 500)) -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v w0="$w0" -v w1="$w1" -v tck="$tck" \
		'BEGIN{printf "%.0f %.2f %.2f %.2f\n", n/(t1-t0), t1-t0, (c1-c0)/tck, (w1-w0)/tck}'
}

echo "| run | local disk: logs/s (s, serve CPU s) | S3 (SeaweedFS): logs/s (s, serve CPU s, weed CPU s) | S3 / local |"
echo "|---|---|---|---|"
for i in $(seq "$runs"); do
	log "run $i: local"
	read -r l lt lc _ < <(run local "$i")
	log "run $i: s3"
	read -r s st sc sw < <(run s3 "$i")
	awk -v i="$i" -v l="$l" -v lt="$lt" -v lc="$lc" -v s="$s" -v st="$st" -v sc="$sc" -v sw="$sw" \
		'BEGIN{printf "| %d | %d (%.2f s, %.2f) | %d (%.2f s, %.2f, %.2f) | %.0f%% |\n", i, l, lt, lc, s, st, sc, sw, 100*s/l}'
done
