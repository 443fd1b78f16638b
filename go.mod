module github.com/wirehouse/wirehouse

go 1.26.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/davecgh/go-xdr v0.0.0-20161123171359-e6a2ba005892
	github.com/klauspost/compress v1.20.3
	github.com/stellar/go-xdr v0.0.0-20260828180817-2b1309f8a5a6
	go.opentelemetry.io/collector/pdata v1.70.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/hashicorp/go-version v1.9.0 // indirect
	github.com/json-iterator/go v1.1.12 // indirect
	github.com/modern-go/concurrent v0.0.0-20180306012644-bacd9c7ef1dd // indirect
	github.com/modern-go/reflect2 v1.0.3-0.20250322232337-35a7c28c31ee // indirect
	go.opentelemetry.io/collector/featuregate v1.70.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
)
