#!/usr/bin/env bash
# gateway-crash.sh: the forwarding crash scenario of issue 40, end to end
# (TestForwardGatewayCrash in cmd/wirehouse/serve_forwardcrash_test.go).
#
# A gateway serve (storing nothing) forwards logs and spans to three
# downstream serve nodes, with the default retry settings (backoff up to
# 30 s), under the load of two OpenTelemetry SDK senders (each record a
# unique id). One node is killed with kill -9 for 20 s and started again;
# AFTER after its return the gateway is killed with kill -9, started again
# on its data directory, and left to drain. Then the nodes' lakes are
# counted: acknowledged records lost (must be 0), delivered more than once
# (what was in flight at the kill), ids on two nodes (must be 0), and the
# gateway's queue age after the node's return (under 1 s within 3 s).
# Each AFTER runs RUNS times; about 50 s + AFTER a run.
#
# Usage: scripts/gateway-crash.sh [RUNS [AFTER,...]]
#   e.g. scripts/gateway-crash.sh 3 15s,45s    (the default; ~8 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
after=${2:-15s,45s}
WIREHOUSE_FORWARD_CRASH=1 WIREHOUSE_FORWARD_CRASH_RUNS=$runs WIREHOUSE_FORWARD_CRASH_AFTER=$after \
	go test -count=1 -timeout 60m -run '^TestForwardGatewayCrash$' -v ./cmd/wirehouse/ |
	grep -E 'serve_forwardcrash_test.go|^(--- |=== RUN|PASS|FAIL|ok )'
