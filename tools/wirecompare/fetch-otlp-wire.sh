#!/usr/bin/env bash
# fetch-otlp-wire.sh: put otlp-wire (github.com/ollygarden/otlp-wire,
# module go.olly.garden/otlp-wire, Apache-2.0) at the pinned commit into
# ./otlp-wire, which go.mod's replace points at. The module proxy does not
# serve it, so it comes from its repository: cloned from GitHub, or from
# the git directory OTLPWIRE_GIT names (a mirror or a local clone).
# Nothing of it is committed here (.gitignore).
set -euo pipefail
cd "$(dirname "$0")"
commit=f38dda7f41563748f1b6d11cc11f649dbeb93f39
src=${OTLPWIRE_GIT:-https://github.com/ollygarden/otlp-wire.git}
if [ -f otlp-wire/.commit ] && [ "$(cat otlp-wire/.commit)" = "$commit" ]; then
	exit 0
fi
rm -rf otlp-wire otlp-wire.tmp
git clone --quiet --no-checkout "$src" otlp-wire.tmp
git -C otlp-wire.tmp checkout --quiet "$commit"
mkdir otlp-wire
git -C otlp-wire.tmp archive "$commit" | tar -x -C otlp-wire
rm -rf otlp-wire.tmp
grep -q "Apache License" otlp-wire/LICENSE || { echo "otlp-wire: LICENSE is not Apache-2.0 any more: read it" >&2; exit 1; }
# its own tests are not ours to run
find otlp-wire -name '*_test.go' -delete
echo "$commit" >otlp-wire/.commit
echo "fetch-otlp-wire: otlp-wire $commit in $(pwd)/otlp-wire" >&2
