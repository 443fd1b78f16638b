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
// proto name, with their signal; profiles (signal 0) are listed so that
// their documents are recognised too.
var topKeys = [...]struct {
	name string
	sig  otlpwire.Signal
}{
	{"resourceLogs", otlpwire.SignalLogs}, {"resource_logs", otlpwire.SignalLogs},
	{"resourceSpans", otlpwire.SignalTraces}, {"resource_spans", otlpwire.SignalTraces},
	{"resourceMetrics", otlpwire.SignalMetrics}, {"resource_metrics", otlpwire.SignalMetrics},
	{"resourceProfiles", 0}, {"resource_profiles", 0},
}

// requestFields calls f with each top-level field of doc that names a
// signal's resources, in topKeys' order, until f returns false; it
// reports false if doc is not a JSON object.
func requestFields(doc []byte, f func(key string, sig otlpwire.Signal) bool) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return false
	}
	for _, k := range topKeys {
		if _, ok := top[k.name]; ok && !f(k.name, k.sig) {
			break
		}
	}
	return true
}

// OtherSignalKey returns the top-level field of doc that belongs to
// another signal's export request than sig's, or "" if there is none or
// doc is not a JSON object. It decodes doc's top level, so call it only
// when ToProto returned an empty request.
func OtherSignalKey(sig otlpwire.Signal, doc []byte) string {
	other := ""
	requestFields(doc, func(key string, s otlpwire.Signal) bool {
		if s != sig || s == 0 {
			other = key
			return false
		}
		return true
	})
	return other
}

// SignalOf returns the signal of doc, an OTLP/JSON export request, by its
// top-level field (resourceLogs, resourceSpans or resourceMetrics, or
// their proto names), with the field found; false if doc is not a JSON
// object or has none of them, or has fields of two signals.
func SignalOf(doc []byte) (otlpwire.Signal, string, bool) {
	var (
		found otlpwire.Signal
		key   string
		mixed bool
	)
	requestFields(doc, func(k string, s otlpwire.Signal) bool {
		if s == 0 || found != 0 && found != s {
			mixed = true
			return false
		}
		found, key = s, k
		return true
	})
	if mixed || found == 0 {
		return 0, "", false
	}
	return found, key, true
}
