#!/usr/bin/env bash
# run.sh: otlpwire against otlp-wire and an easyproto single pass, in one
# run on this machine. Fetches otlp-wire at the pinned commit first
# (OTLPWIRE_GIT: a git directory to clone from instead of GitHub).
# Usage: tools/wirecompare/run.sh [COUNT]   (benchmark output on stdout)
set -euo pipefail
cd "$(dirname "$0")"
./fetch-otlp-wire.sh
go test -run '^$' -bench . -benchmem -count "${1:-6}" .
