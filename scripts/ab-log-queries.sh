#!/usr/bin/env bash
# ab-log-queries.sh: two builds of wirehouse serve, alternating, reading
# one lake: the A/B check the side-by-side scripts are too noisy for (a
# change worth a few percent drowns in their run-to-run spread).
#
# The lake is written once, by build A: REQS requests of 500 logs of
# wirehouse load --signal logs --transport http --batch 500 --resources
# 10 --concurrency 2 (compare-log-reads.sh's load shape; 1.5M logs by
# default). Then ROUNDS times, each build in turn serves it and answers
# each query RUNS times over the last 2 hours of the data (the metric
# query over its last 30 minutes, step 60); printed: P50 latency and
# the server's CPU a query (/proc/PID/stat). Compaction is off
# (--lake-compact=false): a merge started by one build's serve would
# change the lake, and take CPU, under the next one's queries (with it
# on, the second build of each round read 10-20 % slower, whichever it
# was).
#
# Usage: scripts/ab-log-queries.sh REV_A REV_B [REQS [RUNS [ROUNDS]]]
#        (git revisions, built in worktrees; default 3000 10 2)
# Text on stdout, progress on stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/harness.sh
rev_a=$1 rev_b=$2 reqs=${3:-3000} runs=${4:-10} rounds=${5:-2}
harness ab-log-queries

for r in a b; do
	rev=$rev_a
	[ "$r" = b ] && rev=$rev_b
	log "building $rev"
	git worktree add -q --detach "$work/src-$r" "$rev"
	(cd "$work/src-$r" && go build -o "$work/wirehouse-$r" ./cmd/wirehouse)
	git worktree remove --force "$work/src-$r"
done

grpc=$(port) http=$(port) admin=$(port)
serve() { # serve BUILD: start it on the lake, set pid
	"$work/wirehouse-$1" serve --data-dir "$work/data" --grpc-listen "127.0.0.1:$grpc" --http-listen "127.0.0.1:$http" \
		--admin-listen "127.0.0.1:$admin" --jaeger-storage-listen "" --lake-compact=false --log-level warn 2>>"$work/serve.log" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 600); do curl -sf "http://127.0.0.1:$admin/readyz" >/dev/null && return; sleep 0.1; done
	log "serve did not start"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; }

log "writing the lake ($reqs requests of 500 logs) with $rev_a"
serve a
"$work/wirehouse-a" load --signal logs --transport http --endpoint "http://127.0.0.1:$http" --count "$reqs" --variants "$reqs" \
	--batch 500 --resources 10 --concurrency 2 --quiet --json >/dev/null
want=$((reqs * 500))
until [ "$(curl -sf "http://127.0.0.1:$admin/metrics" | awk '/^wirehouse_lake_rows_total/ {s += $2} END {printf "%d", s}')" -ge "$want" ]; do
	sleep 0.5
done
stop
end=$(date -u +%s)

cpu() { awk '{print $14+$15}' "/proc/$pid/stat"; }
query() { # query NAME LOGQL SECONDS EXTRA...
	local name=$1 q=$2 back=$3
	shift 3
	local times=() c0 c1
	c0=$(cpu)
	for _ in $(seq "$runs"); do
		times+=("$(curl -s -o /dev/null -w '%{time_total}' -G "http://127.0.0.1:$admin/loki/api/v1/query_range" \
			--data-urlencode "query=$q" --data-urlencode "start=$((end - back))" --data-urlencode "end=$end" "$@")")
	done
	c1=$(cpu)
	printf '%s: P50 %s ms, CPU %s ms a query\n' "$name" \
		"$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]*1000}')" \
		"$(((c1 - c0) * 10 / runs))"
}
for round in $(seq "$rounds"); do
	for r in a b; do
		rev=$rev_a
		[ "$r" = b ] && rev=$rev_b
		echo "== round $round, $rev"
		serve "$r"
		sleep 2
		query "frequent token, all services" '{service_name=~".+"} |= "exhausted"' 7200 --data-urlencode limit=1000
		query "frequent token, checkout" '{service_name="checkout"} |= "exhausted"' 7200 --data-urlencode limit=1000
		query "regex, checkout" '{service_name="checkout"} |~ "status=5[0-9][0-9]"' 7200 --data-urlencode limit=1000
		query "attributes, all services" '{service_name=~".+"} | app_customer_tier="enterprise" | http_response_status_code="503"' 7200 --data-urlencode limit=1000
		query "attributes, checkout" '{service_name="checkout"} | app_customer_tier="enterprise" | http_response_status_code="503"' 7200 --data-urlencode limit=1000
		query "topk by a phrase" 'topk(3, sum by (service_name) (count_over_time({service_name=~".+"} |= "deadline exceeded" [30m])))' 1800 --data-urlencode step=60
		stop
	done
done
