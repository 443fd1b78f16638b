# The one test command: what .ci/run and the README's quick start call.
# Check every dependency's license, format, vet, install the real OTLP peers
# the end-to-end tests drive, then every package's tests (including fuzz
# seed corpora).
GO ?= go

# telemetrygen, the OpenTelemetry Collector project's load generator, pinned.
TELEMETRYGEN_VERSION := v0.161.0
TELEMETRYGEN := $(CURDIR)/bin/telemetrygen-$(TELEMETRYGEN_VERSION)
# The Jaeger query service, pinned by tools/jaeger/go.mod.
JAEGER := $(CURDIR)/bin/jaeger-v1.76.0
# SeaweedFS (an S3-compatible object store), pinned by tools/seaweedfs/go.mod.
WEED := $(CURDIR)/bin/weed-20261109003541
# The OpenTelemetry Collector v0.159 the oracle tests compare with (the OTLP
# receiver, the spanmetrics and servicegraph connectors, deltatocumulative,
# OTLP/HTTP and Prometheus remote write exporters): the module ocb generated
# in tools/otelcol from its builder-config.yaml.
OTELCOL := $(CURDIR)/bin/otelcol-0.159.0

# A Python venv with DuckDB and pyarrow, which read the lake in the tests.
PYVENV := $(CURDIR)/bin/pyenv
# winston-loki (MIT) and its snappy binding from npm: a Node.js Loki client
# pushing protobuf + snappy (tools/lokipush-node/package-lock.json).
NODE_LOKIPUSH := $(CURDIR)/tools/lokipush-node

# promtool and the Prometheus server from Debian's prometheus package (2.42):
# promtool queries the PromQL API in the tests, the server scrapes serve and
# remote-writes to it; extracted from the .deb, no root install.
PROMTOOL := $(CURDIR)/bin/promtool
PROMETHEUS := $(CURDIR)/bin/prometheus

# Chromium from Debian's chromium package, which the web UI's tests
# (internal/webui) drive headless; apt-get installs it once, as root.
CHROMIUM := /usr/bin/chromium
# Debian's prometheus-alertmanager (0.25.0; installed with apt-get, as
# its templates are read from /usr/share/prometheus/alertmanager): the
# Alertmanager the rules' notifications go to in the tests.
ALERTMANAGER := /usr/bin/prometheus-alertmanager

# Apache Spark reads the lake in cmd/wirehouse's TestServeSparkLake:
# pyspark 3.5 (in the venv) on Java 17 from Debian's
# openjdk-17-jre-headless (apt-get installs it once, as root), and for
# s3a:// the hadoop-aws of the Hadoop pyspark bundles (3.3.4) with the AWS
# SDK bundle it was built with, from Maven Central, checked against the
# SHA-1 Maven Central publishes beside each.
JAVA := /usr/bin/java
MAVEN_CENTRAL := https://repo1.maven.org/maven2
HADOOP_AWS := $(CURDIR)/bin/hadoop-aws-3.3.4.jar
HADOOP_AWS_SHA1 := a65839fbf1869f81a1632e09f415e586922e4f80
AWS_SDK_BUNDLE := $(CURDIR)/bin/aws-java-sdk-bundle-1.12.262.jar
AWS_SDK_BUNDLE_SHA1 := 02deec3a0ad83d13d032b1812421b23d7a961eea
SPARK_JARS := $(HADOOP_AWS),$(AWS_SDK_BUNDLE)

.PHONY: test licenses peers bench fuzz race screenshots

# Each phase prints one line when it starts ("== phase") and one with its
# time when it ends, so a first run on a fresh machine shows it is working.
# (No commas in a phase's text: make's call splits on them.)
PHASE = @echo "== $(1)"; t0=$$(date +%s)
DONE = echo "   done in $$(( $$(date +%s) - t0 ))s"

# The Go peers are linked without symbol tables and DWARF (-s -w): nobody
# debugs them here, and weed links in 8 s instead of 17 s (warm cache) and
# is 164 MB instead of 233 MB. They are compiled without inlining (-l):
# compiling is most of a cold make test on 2 cores, and telemetrygen
# compiles in 65 CPU-s instead of 94 without it (empty build cache,
# 2026-11-29); the peers run a little slower, which no test measures.
PEER_FLAGS := -ldflags=-s\ -w -gcflags=all=-l

# The licenses and the peers are made side by side (make -j): downloads
# (pip's pyspark, the jars, Debian's packages) overlap the Go builds
# (Jaeger, SeaweedFS, telemetrygen, the license check), which share the module
# cache. Each peer prints a line when it starts and one when it is done.
PREPARE_JOBS ?= 4

test:
	@$(MAKE) --no-print-directory -j$(PREPARE_JOBS) licenses peers
	$(call PHASE,gofmt: every .go file git knows); \
	unformatted=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$unformatted" ]; then echo "gofmt needed:"; echo "$$unformatted"; exit 1; fi; $(DONE)
	$(call PHASE,vet: go vet ./... (builds every package and test)); $(GO) vet ./... && $(DONE)
	$(call PHASE,tests: go test ./... (unit and end-to-end tests with the peers; fuzz seed corpora)); \
	WIREHOUSE_TELEMETRYGEN=$(TELEMETRYGEN) WIREHOUSE_JAEGER=$(JAEGER) WIREHOUSE_WEED=$(WEED) WIREHOUSE_OTELCOL=$(OTELCOL) WIREHOUSE_PYTHON=$(PYVENV)/bin/python WIREHOUSE_NODE_LOKIPUSH=$(NODE_LOKIPUSH) WIREHOUSE_PROMTOOL=$(PROMTOOL) WIREHOUSE_PROMETHEUS=$(PROMETHEUS) WIREHOUSE_CHROMIUM=$(CHROMIUM) WIREHOUSE_ALERTMANAGER=$(ALERTMANAGER) WIREHOUSE_JAVA=$(JAVA) WIREHOUSE_SPARK_JARS=$(SPARK_JARS) $(GO) test -count=1 ./... && $(DONE)
	$(call PHASE,tests: tools/exportbench (its own module)); cd tools/exportbench && $(GO) vet ./... && $(GO) test -count=1 ./... && $(DONE)
	$(call PHASE,tests: tools/licensecheck (its own module)); cd tools/licensecheck && $(GO) vet ./... && $(GO) test -count=1 ./... && $(DONE)
	$(call PHASE,tests: internal/promapi/oracle (promapi against Prometheus' web/api/v1; its own module)); cd internal/promapi/oracle && $(GO) vet ./... && $(GO) test -count=1 ./... && $(DONE)

# The real peers the end-to-end tests drive, installed into bin/ once.
peers: $(TELEMETRYGEN) $(PYVENV)/.installed $(NODE_LOKIPUSH)/node_modules/.installed $(PROMTOOL) $(PROMETHEUS) $(JAEGER) $(WEED) $(OTELCOL) $(CHROMIUM) $(JAVA) $(HADOOP_AWS) $(AWS_SDK_BUNDLE) $(ALERTMANAGER)
	@echo "== peers: telemetrygen, the Python venv (OpenTelemetry SDK, DuckDB, pyarrow, pyspark, Loki handlers), winston-loki (npm), promtool, prometheus, jaeger, weed (SeaweedFS), otelcol (the Collector) and Spark's s3a jars in bin/; chromium, java and prometheus-alertmanager in /usr/bin"

# The license of every package each Go module of the repository builds or
# tests with, against the allow-list in scripts/check-licenses.sh (which
# builds tools/licensecheck, go-licenses' check classifying each license
# file once, into bin/).
licenses:
	$(call PHASE,licenses: every Go module's dependencies (test-only ones included) against the allow-list in scripts/check-licenses.sh); \
	GO=$(GO) sh scripts/check-licenses.sh && $(DONE)

$(TELEMETRYGEN):
	$(call PHASE,peers: installing telemetrygen $(TELEMETRYGEN_VERSION) (go install; ~17 MB)); \
	mkdir -p $(CURDIR)/bin/tmp/telemetrygen && \
	GOBIN=$(CURDIR)/bin/tmp/telemetrygen $(GO) install $(PEER_FLAGS) github.com/open-telemetry/opentelemetry-collector-contrib/cmd/telemetrygen@$(TELEMETRYGEN_VERSION) && \
	mv $(CURDIR)/bin/tmp/telemetrygen/telemetrygen $@ && $(DONE) "(telemetrygen)"

$(JAEGER): tools/jaeger/go.mod
	$(call PHASE,peers: building the Jaeger query service v1.76.0 from tools/jaeger (go build; ~85 MB)); \
	mkdir -p $(CURDIR)/bin/tmp && \
	(cd tools/jaeger && $(GO) build $(PEER_FLAGS) -o $(CURDIR)/bin/tmp/jaeger github.com/jaegertracing/jaeger/cmd/jaeger) && \
	mv $(CURDIR)/bin/tmp/jaeger $@ && $(DONE) "(jaeger)"

$(WEED): tools/seaweedfs/go.mod
	$(call PHASE,peers: building SeaweedFS (weed; an S3-compatible store) from tools/seaweedfs (go build; ~165 MB)); \
	mkdir -p $(CURDIR)/bin/tmp && \
	(cd tools/seaweedfs && $(GO) build $(PEER_FLAGS) -o $(CURDIR)/bin/tmp/weed github.com/seaweedfs/seaweedfs/weed) && \
	mv $(CURDIR)/bin/tmp/weed $@ && $(DONE) "(weed)"

$(OTELCOL): tools/otelcol/go.mod tools/otelcol/go.sum $(wildcard tools/otelcol/*.go)
	$(call PHASE,peers: building the OpenTelemetry Collector v0.159 from tools/otelcol (ocb's module; go build; ~35 MB)); \
	mkdir -p $(CURDIR)/bin/tmp && \
	(cd tools/otelcol && $(GO) build $(PEER_FLAGS) -o $(CURDIR)/bin/tmp/otelcol .) && \
	mv $(CURDIR)/bin/tmp/otelcol $@ && $(DONE) "(otelcol)"

$(PYVENV)/.installed: requirements-test.txt
	$(call PHASE,peers: installing the Python venv from requirements-test.txt (pip; ~900 MB with pyspark)); \
	python3 -m venv $(PYVENV) && \
	$(PYVENV)/bin/pip install --quiet --disable-pip-version-check -r requirements-test.txt && \
	touch $@ && $(DONE) "(python venv)"

$(NODE_LOKIPUSH)/node_modules/.installed: $(NODE_LOKIPUSH)/package-lock.json
	$(call PHASE,peers: installing winston-loki from tools/lokipush-node/package-lock.json (npm ci; ~10 MB)); \
	(cd $(NODE_LOKIPUSH) && npm ci --no-audit --no-fund --loglevel=error) && \
	touch $@ && $(DONE) "(winston-loki)"

# apt-get runs one at a time (Debian's lock): chromium, then java, then
# prometheus-alertmanager, then the prometheus package.
$(PROMTOOL) $(PROMETHEUS) &: | $(ALERTMANAGER)
	$(call PHASE,peers: extracting promtool and prometheus from Debian's prometheus package (~100 MB)); \
	rm -rf $(CURDIR)/bin/tmp/deb && mkdir -p $(CURDIR)/bin/tmp/deb && \
	(cd $(CURDIR)/bin/tmp/deb && { apt-get download prometheus || { apt-get update -qq && apt-get download prometheus; }; } \
		&& dpkg-deb -x prometheus_*.deb x && mv x/usr/bin/promtool $(PROMTOOL) && mv x/usr/bin/prometheus $(PROMETHEUS)) && \
	rm -rf $(CURDIR)/bin/tmp/deb && $(DONE) "(promtool and prometheus)"

$(CHROMIUM):
	@echo "== peers: installing Debian's chromium package (apt-get; ~350 MB)"
	apt-get install -y --no-install-recommends chromium || { apt-get update -qq && apt-get install -y --no-install-recommends chromium; }

$(ALERTMANAGER): | $(JAVA)
	@echo "== peers: installing Debian's prometheus-alertmanager (apt-get; ~45 MB)"
	apt-get install -y --no-install-recommends prometheus-alertmanager || { apt-get update -qq && apt-get install -y --no-install-recommends prometheus-alertmanager; }

# Java 17 for Spark. Slim Debian images lack /usr/share/man/man1, without
# which the package's postinst fails.
$(JAVA): | $(CHROMIUM)
	@echo "== peers: installing Debian's openjdk-17-jre-headless (apt-get; ~190 MB)"
	mkdir -p /usr/share/man/man1
	apt-get install -y --no-install-recommends openjdk-17-jre-headless || { apt-get update -qq && apt-get install -y --no-install-recommends openjdk-17-jre-headless; }

# $(call MAVEN_JAR,directory,sha1): the jar $@ from that directory of
# Maven Central (group/artifact/version), kept only if its SHA-1 is sha1.
MAVEN_JAR = $(call PHASE,peers: downloading $(notdir $@) from Maven Central); \
	mkdir -p $(CURDIR)/bin/tmp && \
	curl -fsSL --retry 3 -o $(CURDIR)/bin/tmp/$(notdir $@) $(MAVEN_CENTRAL)/$(1)/$(notdir $@) && \
	echo "$(2)  $(CURDIR)/bin/tmp/$(notdir $@)" | sha1sum -c --quiet && \
	mv $(CURDIR)/bin/tmp/$(notdir $@) $@ && $(DONE) "($(notdir $@))"

$(HADOOP_AWS):
	$(call MAVEN_JAR,org/apache/hadoop/hadoop-aws/3.3.4,$(HADOOP_AWS_SHA1))

$(AWS_SDK_BUNDLE):
	$(call MAVEN_JAR,com/amazonaws/aws-java-sdk-bundle/1.12.262,$(AWS_SDK_BUNDLE_SHA1))

# The web UI's screenshots in docs/screenshots (the README's), taken by
# its Chromium test against a serve fed by the load generator (~1 min).
screenshots: $(CHROMIUM)
	WIREHOUSE_CHROMIUM=$(CHROMIUM) WIREHOUSE_SCREENSHOTS=$(CURDIR)/docs/screenshots $(GO) test -count=1 -run '^TestBrowser$$' ./internal/webui/

# Benchmarks of docs/BENCHMARKS.md (long; not part of test).
bench:
	$(GO) test -run='^$$' -bench=. -benchmem -count=5 ./otlpwire/ ./internal/receiver/ ./internal/lake/

# The race detector over the unit-tested packages (~4 min on 2 vCPUs; not
# part of test, which must stay under 20 minutes cold). It found a real
# race in the metric store's replay on 2026-11-26.
race:
	$(call PHASE,race: go test -race over otlpwire xdr and internal (no peers: their end-to-end tests skip)); \
	$(GO) test -race -count=1 ./otlpwire/... ./xdr/... ./internal/... && $(DONE)

# Every fuzz target for FUZZTIME (default 3m), one after another:
# package:target pairs.
FUZZTIME ?= 3m
FUZZ_TARGETS := \
	./otlpwire/:FuzzCount ./otlpwire/:FuzzValidate ./otlpwire/:FuzzIterate \
	./otlpwire/:FuzzSplit ./otlpwire/:FuzzHash ./otlpwire/:FuzzMigrate ./otlpwire/:FuzzValidatingWalk \
	./internal/promwrite/:FuzzSameAsPrometheus \
	./xdr/:FuzzDecoder ./xdr/internal/xdrtest/:FuzzEverything \
	./xdr/internal/xdrtest/:FuzzFile ./xdr/internal/xdrtest/:FuzzCompany \
	./xdr/internal/xdrtest/:FuzzOperation ./xdr/internal/xdrtest/:FuzzRoundTrip \
	./xdr/internal/xdrtest/:FuzzBulk ./internal/xdrgen/:FuzzCompile \
	./internal/receiver/:FuzzHTTPBody ./internal/lake/:FuzzLogRows ./internal/lake/:FuzzSpanRows ./internal/lake/:FuzzParquet ./internal/lake/:FuzzParquetV2 ./internal/lake/:FuzzParseObject \
	./internal/lakeread/:FuzzTraceFile ./internal/lakeread/:FuzzLogFile ./internal/jaegerstorage/:FuzzRequests ./internal/jaegerhttp/:FuzzTraceJSON ./internal/jaegerhttp/:FuzzSearchParams ./internal/readapi/:FuzzParseTraceID ./internal/readapi/:FuzzParseTimes ./internal/logql/:FuzzParse ./internal/logql/eval/:FuzzPipeline ./internal/lokiapi/:FuzzParams \
	./internal/otlpfile/:FuzzSplitDelimited ./internal/otlpfile/:FuzzReadFile \
	./internal/spool/:FuzzOpenSegment ./internal/metricstore/:FuzzAppendOTLP ./internal/metricstore/:FuzzScanSegment ./internal/promapi/:FuzzParams \
	./internal/loadgen/:FuzzParseStatCPU ./internal/bearer/:FuzzParse ./internal/serve/:FuzzDecodeConfig ./internal/ruler/:FuzzRuleFile ./internal/tracemetrics/:FuzzConsume \
	./internal/serve/:FuzzParseLakeURL ./internal/lake/:FuzzDataFiles ./internal/lake/:FuzzParseFile ./internal/lake/:FuzzParseCounts \
	./otlpwire/:FuzzRoute ./internal/forward/:FuzzResponses \
	./internal/traceql/:FuzzParse ./internal/traceql/eval/:FuzzTraceQL ./internal/traceql/eval/:FuzzMetricsSpanwise \
	./internal/tempohttp/:FuzzSearchParams ./internal/lake/:FuzzReadTraceIDs \
	./internal/lokipush/:FuzzProto ./internal/lokipush/:FuzzJSON ./internal/receiver/:FuzzLokiPush \
	./internal/lokiapi/:FuzzDrilldownParams ./internal/logpattern/:FuzzMiner \
	./internal/lake/:FuzzParseGrams ./internal/lake/:FuzzGramsRegion ./internal/lakeread/:FuzzJSONKVs \
	./internal/lokiapi/:FuzzAppendJSONString ./internal/logql/eval/:FuzzSelection ./internal/overrides/:FuzzParse \
	./internal/lokiapi/:FuzzDeleteParams ./internal/serve/:FuzzSpanDeleteParams
fuzz:
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		$(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=10s $$pkg || exit 1; \
	done
