#!/bin/sh
# check-licenses.sh: fail when a package that any Go module of this
# repository builds or tests with has a license outside the allow-list.
#
# It builds tools/licensecheck into bin/ and runs it over every package of
# every module: google/go-licenses' check (Apache-2.0, v1.6.0 pinned by
# tools/licensecheck/go.mod, its own licenses package and classifier) with
# each license file classified once rather than once per package, which
# was most of this script's time (a module's 40 s became 6 s, same
# verdicts). As `go-licenses check --include_tests`, it checks every
# package of every module
# (each go.mod git knows of, tracked or not yet added): the packages a
# module builds, the packages its tests import, and everything those
# import, for this machine's GOOS/GOARCH and no build tags. Each package's
# license is the one go-licenses classifies in the nearest license file
# of its module's directory in the module cache (LICENSE, COPYING, …).
# Needs the Go module proxy (once, for go-licenses and any module not yet
# in the module cache) and no other network.
#
# Allowed: permissive licenses (Apache-2.0, MIT, BSD-2-Clause,
# BSD-3-Clause, ISC and, if they ever occur, 0BSD, Unlicense, CC0-1.0) and
# MPL-2.0, which Prometheus and the Collector ship too (today
# github.com/hashicorp/go-version, through the Collector's pdata). MPL-2.0
# is a weak, file-level copyleft: its terms cover the MPL-licensed files
# themselves, which we use unmodified and whose source is public, not the
# code built with them (MPL-2.0 §3.3, a "Larger Work"), so it can ship in
# an Apache-2.0 binary. Anything else fails: AGPL, GPL, LGPL, SSPL, other
# licenses, and a package whose license is not recognised ("unknown").
#
# Our own code is Apache-2.0 by the LICENSE at the root, which go-licenses
# finds for the root module's packages. It looks for a license file no
# higher than a module's root, so each nested module's own packages are
# ignored (--ignore its path); their dependencies are still checked.
#
# A module whose license file go-licenses cannot classify with enough
# confidence fails as "unknown" until a person has read the file: then it
# goes into REVIEWED with the license read and the file's SHA-256, and is
# ignored (its dependencies still checked) while the file is unchanged.
#
# A module with no Go files of its own (tools/jaeger) only builds a peer
# program the tests run, as telemetrygen and prometheus are installed
# from elsewhere: it is named and skipped.
#
# Usage: scripts/check-licenses.sh (from anywhere; GO overrides `go`).
set -eu

GO=${GO:-go}
# The go-licenses version tools/licensecheck/go.mod pins (v1.6.0, the
# newest release; v2.0.0-alpha.1 is served but the go command refuses it
# here: its deprecation lookup needs a version list the proxy does not
# have), in the binary's name.
VERSION=v1.6.0
ALLOWED=Apache-2.0,MIT,BSD-2-Clause,BSD-3-Clause,ISC,MPL-2.0,0BSD,Unlicense,CC0-1.0
# module, license as read, license file, its SHA-256: one a line.
# modernc.org/b/v2 (tools/exportbench, through Splunk's STEF): the BSD
# 3-clause text with "the names of the authors", below go-licenses'
# confidence threshold.
REVIEWED='
modernc.org/b/v2 BSD-3-Clause LICENSE 9d07736d504d4e0215e9e7c30a7363919a27de54bf2be330a4235769b3f4436c
'

root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin/licensecheck-$VERSION
if [ ! -x "$bin" ] || [ "$root/tools/licensecheck/main.go" -nt "$bin" ] || [ "$root/tools/licensecheck/go.mod" -nt "$bin" ]; then
	mkdir -p "$root/bin/tmp"
	(cd "$root/tools/licensecheck" && "$GO" build -o "$root/bin/tmp/licensecheck" .)
	mv "$root/bin/tmp/licensecheck" "$bin"
fi

cd "$root"
mods=$(git ls-files --cached --others --exclude-standard '*go.mod' 2>/dev/null ||
	find . -name go.mod -not -path './bin/*' | sed 's|^\./||')
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=0
for gomod in $mods; do
	[ -f "$gomod" ] || continue # removed, not yet committed
	case $gomod in */testdata/*) continue ;; esac
	# tools/wirecompare is a benchmark harness run by hand: it needs
	# otlp-wire fetched from its repository first (its fetch script
	# checks that license, Apache-2.0), and nothing of it is linked into
	# wirehouse; its one module from the proxy, easyproto, is Apache-2.0.
	case $gomod in tools/wirecompare/go.mod)
		echo "licenses: tools/wirecompare: benchmark harness, not linked into wirehouse: not scanned"
		continue ;;
	esac
	dir=$(dirname "$gomod")
	path=$(cd "$dir" && "$GO" list -m)
	# A module without Go files only builds a peer program the tests run
	# (tools/jaeger: the Jaeger query service, Apache-2.0), as
	# telemetrygen and prometheus are installed: nothing of it is linked
	# into wirehouse, so its tree is not scanned.
	if [ -z "$(find "$dir" -name '*.go' -print -quit)" ]; then
		echo "licenses: $path: builds a peer program only (no Go files): not scanned"
		continue
	fi
	ignore=
	[ "$dir" = . ] || ignore=--ignore=$path
	# The reviewed modules this module requires, if their file is the one read.
	while read -r m lic file sum; do
		[ -n "$m" ] || continue
		(cd "$dir" && "$GO" list -m "$m" >/dev/null 2>&1) || continue
		mdir=$(cd "$dir" && "$GO" mod download "$m" && "$GO" list -m -f '{{.Dir}}' "$m")
		if [ "$(sha256sum <"$mdir/$file" | cut -d' ' -f1)" = "$sum" ]; then
			echo "licenses: $path: $m taken as $lic (license file reviewed)"
			ignore="$ignore --ignore=$m"
		else
			echo "licenses: $path: $m: $file changed since it was reviewed as $lic: read it again" >&2
			failed=1
		fi
	done <<EOF
$REVIEWED
EOF
	if (cd "$dir" && "$bin" --include_tests --allowed_licenses="$ALLOWED" $ignore ./...) >"$log" 2>&1; then
		echo "licenses: $path: every dependency allowed"
		continue
	fi
	failed=1
	# go-licenses names each refused package; its warnings (non-Go files
	# it cannot follow) are left out, its errors kept.
	awk -v mod="$path" '
		/^Not allowed license / {
			lic = $4; lib = $NF
			if ($4 == "found") { lic = "unknown (no license recognised)" }
			printf "licenses: %s: %s: %s is not allowed\n", mod, lib, lic
			next
		}
		/^[IWEF][0-9][0-9][0-9][0-9] / { keep = /^[EF]/ }
		keep { print "licenses: " mod ": " $0 }
	' "$log" | awk '!seen[$0]++'
	grep -q '^Not allowed license ' "$log" || tail -n 20 "$log"
done
if [ "$failed" -ne 0 ]; then
	echo "licenses: FAILED; allowed: $ALLOWED (see scripts/check-licenses.sh)" >&2
	exit 1
fi
