# The one test command: what .ci/run and the README's quick start call.
# Format, vet, then every package's tests (including fuzz seed corpora).
GO ?= go

.PHONY: test bench fuzz

test:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	$(GO) test -count=1 ./...

# Benchmarks of docs/BENCHMARKS.md (long; not part of test).
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=5 ./otlpwire/

# Each otlpwire fuzz target for FUZZTIME (default 3m), one after another.
FUZZTIME ?= 3m
fuzz:
	for f in FuzzCount FuzzValidate FuzzIterate FuzzSplit FuzzHash; do \
		$(GO) test -run='^$$' -fuzz="^$$f\$$" -fuzztime=$(FUZZTIME) ./otlpwire/ || exit 1; \
	done
