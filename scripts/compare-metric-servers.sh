#!/usr/bin/env bash
# compare-metric-servers.sh: the same OTLP/HTTP metric load against
# wirehouse serve, Prometheus' OTLP receiver and VictoriaMetrics, each
# measured in data points accepted per second of the server's own CPU
# time (user+system from /proc/<pid>/stat, read by `wirehouse load
# --server-pid` at the first request and 6 s after the last response, so
# that deferred work counts: VictoriaMetrics makes new samples searchable
# only at its 5 s in-memory flush).
#
# Payloads (synth.SeriesRequest): 2,000 series, 100 points per request,
# one point per series per second:
#   gauge      2 resource + 2 point attributes
#   rich       20 resource + 10 point attributes, every resource attribute
#              promoted to a label on every server
#   histogram  cumulative classic histogram, 16 bounds
#
# A fourth row, "bare", is tools/grpcecho --http-listen: a bare Go
# net/http server that reads each body and answers 200, doing nothing
# else. Its CPU a request is the transport's floor on this machine, which
# every Go receiver here (wirehouse, Prometheus, VictoriaMetrics) pays
# before it stores a point. It stores nothing, so it has no verify.
#
# Usage: scripts/compare-metric-servers.sh [REQUESTS [RUNS]]
# Results (markdown) on stdout, progress on stderr. The servers are built
# into ./bin/compare on first use (a few minutes): VictoriaMetrics v1.150.0
# and Prometheus v3.16.0 (module v0.316.0, the version wirehouse embeds;
# built with -tags remove_all_sd because the proxy here refuses a Nomad
# module that service discovery needs).
set -euo pipefail
cd "$(dirname "$0")/.."
requests=${1:-4000}
runs=${2:-3}
bin=$PWD/bin/compare
mkdir -p "$bin"
log() { echo "compare: $*" >&2; }

go build -o "$bin/wirehouse" ./cmd/wirehouse
go build -o "$bin/grpcecho" ./tools/grpcecho
if [ ! -x "$bin/victoria-metrics" ]; then
	log "building VictoriaMetrics v1.150.0"
	GOBIN=$bin go install github.com/VictoriaMetrics/VictoriaMetrics/app/victoria-metrics@v1.150.0
fi
if [ ! -x "$bin/prometheus" ]; then
	log "building Prometheus v3.16.0"
	GOBIN=$bin go install -tags remove_all_sd github.com/prometheus/prometheus/cmd/prometheus@v0.316.0
fi

# port returns a free loopback port.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

# run SERVER PAYLOAD prints "accepted cpu_seconds points_per_cpu_s verify".
run() {
	local server=$1 payload=$2 dir pid ep q ready promote=false
	dir=$(mktemp -d)
	[ "$payload" = rich ] && promote=true
	case $server in
	wirehouse)
		local h g a
		h=$(port) g=$(port) a=$(port)
		printf 'data_dir: %s\nmetrics: {promote_all_resource_attributes: %s}\notlp: {http: {listen: 127.0.0.1:%s}, grpc: {listen: 127.0.0.1:%s}}\nadmin: {listen: 127.0.0.1:%s}\nlog: {level: warn}\n' \
			"$dir/data" "$promote" "$h" "$g" "$a" >"$dir/cfg.yaml"
		"$bin/wirehouse" serve --config "$dir/cfg.yaml" 2>"$dir/log" &
		pid=$!
		ep=http://127.0.0.1:$h q=http://127.0.0.1:$a ready=$q/readyz
		;;
	prometheus)
		local p
		p=$(port)
		printf 'global: {scrape_interval: 1m}\notlp: {promote_all_resource_attributes: %s}\n' "$promote" >"$dir/p.yml"
		"$bin/prometheus" --config.file="$dir/p.yml" --storage.tsdb.path="$dir/tsdb" --web.listen-address=127.0.0.1:$p \
			--web.enable-otlp-receiver --log.level=warn 2>"$dir/log" &
		pid=$!
		ep=http://127.0.0.1:$p/api/v1/otlp q=http://127.0.0.1:$p ready=$q/-/ready
		;;
	victoriametrics)
		# VictoriaMetrics turns every resource attribute into a label by
		# default. latencyOffset 0 lets --verify see the last 30 s too.
		local p
		p=$(port)
		"$bin/victoria-metrics" -storageDataPath="$dir/vm" -httpListenAddr=127.0.0.1:$p -loggerLevel=WARN \
			-search.latencyOffset=0s 2>"$dir/log" &
		pid=$!
		ep=http://127.0.0.1:$p/opentelemetry q=http://127.0.0.1:$p ready=$q/health
		;;
	bare)
		local p
		p=$(port)
		"$bin/grpcecho" --listen 127.0.0.1:0 --http-listen 127.0.0.1:$p 2>"$dir/log" &
		pid=$!
		ep=http://127.0.0.1:$p q="" ready=""
		;;
	esac
	if [ -n "$ready" ]; then
		for _ in $(seq 200); do curl -sf "$ready" >/dev/null 2>&1 && break; sleep 0.1; done
	else
		for _ in $(seq 200); do grep -q "bare OTLP/HTTP" "$dir/log" 2>/dev/null && break; sleep 0.1; done
	fi
	sleep 1
	local verify=() out
	# --verify checks number points; histograms are counted, not verified.
	[ "$payload" != histogram ] && [ "$server" != bare ] && verify=(--verify --query-endpoint "$q")
	out=$("$bin/wirehouse" load --signal metrics --transport http --endpoint "$ep" --payload "$payload" \
		--series 2000 --batch 100 --count "$requests" --concurrency 2 --server-pid "$pid" --server-settle 6s --csv --quiet "${verify[@]}" 2>&1) || true
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$dir"
	local row v="-"
	row=$(echo "$out" | sed -n 2p)
	if echo "$out" | grep -q "^verify"; then
		v=$(echo "$out" | grep "^verify" | grep -q "missing 0 series, 0 samples" && echo ok || echo MISSING)
	fi
	# CSV columns: ...,10 records_accepted,...,21 server_cpu_s,22 records_per_server_cpu_s
	echo "$row" | awk -F, -v v="$v" '{print $10, $21, $22, v}'
}

echo "| payload | server | points accepted | server CPU-s (median of $runs) | points per server CPU-second (median; all runs) | verify |"
echo "|---|---|--:|--:|--:|---|"
for payload in gauge rich histogram; do
	for server in wirehouse prometheus victoriametrics bare; do
		rates=() cpus=() acc="" ver=""
		for i in $(seq "$runs"); do
			read -r acc cpu rate ver < <(run "$server" "$payload")
			log "$payload $server run $i: $acc points, $cpu CPU-s, $rate points/CPU-s, verify $ver"
			rates+=("$rate") cpus+=("$cpu")
		done
		med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
		echo "| $payload | $server | $acc | $(med "${cpus[@]}") | $(med "${rates[@]}") ($(IFS=/; echo "${rates[*]}")) | $ver |"
	done
done
