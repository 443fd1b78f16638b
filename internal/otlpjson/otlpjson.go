// Package otlpjson transcodes OTLP export requests between the OTLP/JSON
// encoding and protobuf, for the receiver's OTLP/HTTP JSON path, the file
// reader and the load generator.
//
// It uses pdata's JSON (un)marshalers, which implement the OTLP/JSON rules:
// hex trace and span ids, int64 as string or number, enums as integers or
// names, lowerCamelCase field names with the proto names also accepted.
// This path builds an object graph per request; the protobuf path is the
// fast one.
package otlpjson

import (
	"encoding/json"
	"fmt"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// ToProto returns the protobuf encoding of doc, one OTLP/JSON export
// request of signal sig, in a new slice. Unknown fields are ignored, as
// the specification asks, so a document of another signal transcodes to
// an empty request: see OtherSignalKey.
func ToProto(sig otlpwire.Signal, doc []byte) ([]byte, error) {
	switch sig {
	case otlpwire.SignalLogs:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON(doc); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	case otlpwire.SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(doc); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	case otlpwire.SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalJSON(doc); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	}
	return nil, fmt.Errorf("transcode OTLP/JSON: invalid %v", sig)
}

// FromProto returns the OTLP/JSON encoding of b, one protobuf export
// request of signal sig, in a new slice.
func FromProto(sig otlpwire.Signal, b []byte) ([]byte, error) {
	switch sig {
	case otlpwire.SignalLogs:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return nil, err
		}
		return req.MarshalJSON()
	case otlpwire.SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return nil, err
		}
		return req.MarshalJSON()
	case otlpwire.SignalMetrics:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(b); err != nil {
			return nil, err
		}
		return req.MarshalJSON()
	}
	return nil, fmt.Errorf("transcode to OTLP/JSON: invalid %v", sig)
}

// topKeys are the top-level fields of the export requests, camelCase and
// proto name in pairs; profiles are listed so that their documents are
// recognised too.
var topKeys = [...]string{"resourceLogs", "resource_logs", "resourceSpans", "resource_spans",
	"resourceMetrics", "resource_metrics", "resourceProfiles", "resource_profiles"}

// OtherSignalKey returns the top-level field of doc that belongs to
// another signal's export request than sig's, or "" if there is none or
// doc is not a JSON object. It decodes doc's top level, so call it only
// when ToProto returned an empty request.
func OtherSignalKey(sig otlpwire.Signal, doc []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return ""
	}
	var own string
	switch sig {
	case otlpwire.SignalLogs:
		own = "resourceLogs"
	case otlpwire.SignalTraces:
		own = "resourceSpans"
	case otlpwire.SignalMetrics:
		own = "resourceMetrics"
	}
	for i, k := range topKeys {
		if _, ok := top[k]; ok && topKeys[i&^1] != own {
			return k
		}
	}
	return ""
}

// SignalOf returns the signal of doc, an OTLP/JSON export request, by its
// top-level field (resourceLogs, resourceSpans or resourceMetrics, or
// their proto names), with the field found; false if doc is not a JSON
// object or has none of them, or has fields of two signals.
func SignalOf(doc []byte) (otlpwire.Signal, string, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return 0, "", false
	}
	var (
		found otlpwire.Signal
		key   string
	)
	for i, k := range topKeys[:6] {
		if _, ok := top[k]; !ok {
			continue
		}
		sig := [...]otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics}[i/2]
		if found != 0 && found != sig {
			return 0, "", false
		}
		found, key = sig, k
	}
	return found, key, found != 0
}
