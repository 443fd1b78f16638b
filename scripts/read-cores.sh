#!/usr/bin/env bash
# read-cores.sh: how much faster heavy log queries run on every core than
# on one. Loads LOGS logs into wirehouse serve (wirehouse load --signal
# logs --transport http --batch 500 --resources 10, every request
# distinct, one request a second of data ending at the start of the load,
# as compare-log-reads.sh), waits until the lake holds them all, then
# restarts serve on the same data directory with GOMAXPROCS=1 and with
# GOMAXPROCS unset (every core), alternating, ROUNDS rounds, and runs
# each query RUNS times (after one to warm up) against its Loki API. It
# prints each query's P50 at each setting, the ratio (one core / every
# core) and whether the answers (the lines returned) were equal.
#
# Usage: scripts/read-cores.sh [LOGS [RUNS [ROUNDS]]]   (default 1500000 10 2)
# Markdown on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
logs=${1:-1500000}
runs=${2:-10}
rounds=${3:-2}
batch=500
harness read-cores
pid=

go build -o "$bin/wirehouse" ./cmd/wirehouse
h=$(port) a=$(port)

# serve [GOMAXPROCS] starts serve on the data directory.
serve() {
	env ${1:+GOMAXPROCS=$1} "$bin/wirehouse" serve --data-dir "$work/data" --grpc-listen "" --http-listen 127.0.0.1:$h \
		--admin-listen 127.0.0.1:$a --jaeger-storage-listen "" --log-level warn 2>>"$work/wirehouse.log" &
	pid=$!
	pids=("$pid")
	for i in $(seq 300); do curl -sf "http://127.0.0.1:$a/readyz" >/dev/null 2>&1 && return; sleep 0.1; done
	log "serve not ready"; tail "$work/wirehouse.log" >&2; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid= pids=(); }

serve
requests=$(((logs + batch - 1) / batch))
log "loading $((requests * batch)) logs"
t0=$(date +%s)
"$bin/wirehouse" load --signal logs --transport http --endpoint http://127.0.0.1:$h --count $requests \
	--variants $requests --batch $batch --resources 10 --concurrency 2 --quiet --json >/dev/null
while :; do
	have=$(curl -sf "http://127.0.0.1:$a/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')
	[ "$have" -ge $((requests * batch)) ] && break
	sleep 0.5
done
stop
start=$((t0 - requests - 10))000000000
end=$((t0 + 10))000000000

queries=(
	'frequent token exhausted, all services|{service_name=~".+"} |= "exhausted"'
	'regex status=5[0-9][0-9], all services|{service_name=~".+"} |~ "status=5[0-9][0-9]"'
	'attributes tier=enterprise, status 503, all services|{service_name=~".+"} | app_customer_tier="enterprise" | http_response_status_code="503"'
	'attributes tier=enterprise, status 503, service checkout|{service_name="checkout"} | app_customer_tier="enterprise" | http_response_status_code="503"'
)
# time_query NAME QUERY SETTING appends "SETTING<TAB>NAME<TAB>seconds" lines
# and keeps the answer's lines.
time_query() {
	local i
	for i in $(seq 0 "$runs"); do
		s=$(curl -sf -o "$work/answer" -w '%{time_total}' -G "http://127.0.0.1:$a/loki/api/v1/query_range" \
			--data-urlencode "query=$2" --data-urlencode start=$start --data-urlencode end=$end --data-urlencode limit=1000)
		[ "$i" = 0 ] && continue # warm-up
		printf '%s\t%s\t%s\n' "$3" "$1" "$s" >>"$work/times"
	done
	jq -c '[.data.result[] | .stream as $s | .values[] | [$s.service_name, .[0], .[1]]] | sort' "$work/answer" |
		md5sum | cut -c1-32 >>"$work/answers.$3.$(echo "$1" | md5sum | cut -c1-8)"
}
for r in $(seq "$rounds"); do
	for setting in 1 all; do
		log "round $r: GOMAXPROCS=$setting"
		if [ "$setting" = 1 ]; then serve 1; else serve; fi
		for q in "${queries[@]}"; do
			time_query "${q%%|*}" "${q#*|}" "$setting"
		done
		stop
	done
done

echo "| query | P50 ms, GOMAXPROCS=1 | P50 ms, every core ($(nproc)) | one core / every core | same answers |"
echo "|---|--:|--:|--:|---|"
for q in "${queries[@]}"; do
	name=${q%%|*}
	k=$(echo "$name" | md5sum | cut -c1-8)
	same=no
	[ "$(sort -u "$work/answers.1.$k" "$work/answers.all.$k" | wc -l)" = 1 ] && same=yes
	p50() { awk -F'\t' -v s="$1" -v n="$name" '$1 == s && $2 == n {print $3}' "$work/times" | sort -n |
		awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)] * 1000}'; }
	one=$(p50 1) all=$(p50 all)
	awk -v n="$name" -v o="$one" -v a="$all" -v s="$same" 'BEGIN { printf "| %s | %.1f | %.1f | %.2f | %s |\n", n, o, a, o / a, s }'
done
