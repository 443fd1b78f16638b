// wirecompare measures otlpwire against otlp-wire and an easyproto single
// pass, in one run (./run.sh). otlp-wire is not served by the module
// proxy: fetch-otlp-wire.sh puts it, at a pinned commit, in ./otlp-wire.
module github.com/wirehouse/wirehouse/tools/wirecompare

go 1.26.7

replace github.com/wirehouse/wirehouse => ../..

replace go.olly.garden/otlp-wire => ./otlp-wire

require (
	github.com/VictoriaMetrics/easyproto v1.2.0
	github.com/wirehouse/wirehouse v0.0.0-00010101000000-000000000000
	go.olly.garden/otlp-wire v0.0.0-00010101000000-000000000000
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)
