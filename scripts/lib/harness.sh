# harness.sh, sourced by the side-by-side scripts (compare-log-reads.sh,
# compare-trace-reads.sh, compare-ingest.sh, read-cores.sh): what each
# needs before its own work.
#
# harness NAME sets work (a fresh directory under /tmp, removed on exit)
# and bin (bin/readcompare, made), defines log (progress on stderr,
# prefixed by NAME) and port (a free loopback port), and on exit kills
# every pid in the array pids and waits for them.
harness() {
	bin=$PWD/bin/readcompare
	work=$(mktemp -d "/tmp/$1.XXXXXX")
	mkdir -p "$bin"
	harness_name=$1
	pids=()
	trap harness_cleanup EXIT
}

log() { echo "$harness_name: $*" >&2; }

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

harness_cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
