#!/usr/bin/env bash
# Two tenants on one `wirehouse serve`, per-tenant limits from an
# overrides file (limits.overrides_file):
#
#   1. tenant b alone sends logs within its limit: its latency P99;
#   2. tenant b again, the same load, while tenant a sends ten times its
#      own limit: b's P99 again, and how a was refused.
#
# Prints both P99s and their ratio (the goal: at most 2x), b's refusals
# (the goal: none), a's refusals by status (429 / RESOURCE_EXHAUSTED) and
# then, serve stopped, checks that the lake holds exactly the records each
# tenant had acknowledged (pyarrow from bin/pyenv, or WIREHOUSE_PYTHON).
#
# Usage: scripts/tenant-fairness.sh [SECONDS]   (default 20 per phase)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
python=${WIREHOUSE_PYTHON:-bin/pyenv/bin/python}
go build -o bin/wirehouse-fairness ./cmd/wirehouse
work=$(mktemp -d)
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$work"' EXIT

tokA=tenant-a-token-0123456789
tokB=tenant-b-token-0123456789
printf '%s a\n%s b\n' "$tokA" "$tokB" >"$work/tokens"
# a: 2,000 logs/s; b: 20,000 logs/s. b sends 5,000/s (within), a 20,000/s
# (ten times its own).
cat >"$work/overrides.yaml" <<'EOF'
overrides:
  a:
    logs: {records_per_second: 2000}
    inflight_share: 0.5
  b:
    logs: {records_per_second: 20000}
    inflight_share: 0.5
EOF
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
grpc=127.0.0.1:$(port) http=127.0.0.1:$(port) admin=127.0.0.1:$(port)
bin/wirehouse-fairness serve --data-dir "$work/data" --grpc-listen "$grpc" --http-listen "$http" \
	--admin-listen "$admin" --jaeger-storage-listen 127.0.0.1:0 --lake-max-delay 1s \
	--otlp-bearer-tokens-file "$work/tokens" --limits-overrides-file "$work/overrides.yaml" \
	>"$work/serve.log" 2>&1 &
serve_pid=$!
for _ in $(seq 100); do curl -sf "http://$admin/readyz" >/dev/null && break; sleep 0.1; done

load() { # token rate seconds: gRPC logs, batches of 100
	bin/wirehouse-fairness load --signal logs --endpoint "$grpc" --bearer-token "$1" --batch 100 \
		--rate "$2" --concurrency 8 --procs 1 --duration "$3s" --json --quiet
}
field() { python3 -c "import json,sys; d=json.load(open('$1')); print($2)"; }

echo "== phase 1: b alone, 50 requests/s of 100 logs, ${secs}s"
load "$tokB" 50 "$secs" >"$work/b-alone.json"
echo "== phase 2: b again while a sends 200 requests/s of 100 logs (10x its limit)"
load "$tokA" 200 $((secs + 4)) >"$work/a.json" &
a_pid=$!
sleep 2
load "$tokB" 50 "$secs" >"$work/b-shared.json"
wait "$a_pid"

p99a=$(field "$work/b-alone.json" 'd["latency"]["p99_ns"]/1e6')
p99s=$(field "$work/b-shared.json" 'd["latency"]["p99_ns"]/1e6')
printf 'b alone:       P99 %.2f ms, %s requests, %s failed %s\n' "$p99a" \
	"$(field "$work/b-alone.json" 'd["requests"]')" "$(field "$work/b-alone.json" 'd["failed"]')" "$(field "$work/b-alone.json" 'd["errors"]')"
printf 'b beside a:    P99 %.2f ms, %s requests, %s failed %s\n' "$p99s" \
	"$(field "$work/b-shared.json" 'd["requests"]')" "$(field "$work/b-shared.json" 'd["failed"]')" "$(field "$work/b-shared.json" 'd["errors"]')"
printf 'ratio (goal <= 2): %.2f\n' "$(python3 -c "print($p99s/$p99a)")"
printf 'a:             %s requests, %s acknowledged, refused %s\n' \
	"$(field "$work/a.json" 'd["requests"]')" "$(field "$work/a.json" 'd["ok"]')" "$(field "$work/a.json" 'd["errors"]')"
curl -s "http://$admin/metrics" | grep '^wirehouse_tenant_refused_requests_total' || true

kill -TERM "$serve_pid"
wait "$serve_pid" || true
for t in a b; do
	want=0
	for f in "$work"/$t*.json; do
		[ "$t" = b ] || [ "$f" = "$work/a.json" ] || continue
		want=$((want + $(field "$f" 'd["records_accepted"]')))
	done
	got=$("$python" -c "import pyarrow.dataset as ds; print(ds.dataset('$work/data/lake/logs/tenant=$t', format='parquet', partitioning='hive').count_rows())")
	echo "tenant $t: $got rows in the lake, $want acknowledged: $([ "$got" = "$want" ] && echo equal || echo DIFFERENT)"
done
