package receiver

import (
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// transcodeJSON turns an OTLP/JSON request into protobuf bytes with pdata's
// JSON unmarshaler, which implements the OTLP/JSON rules: hex trace and
// span ids, int64 as string or number, enums as integers or names,
// lowerCamelCase field names with the proto names also accepted. This path
// allocates an object graph; the protobuf path is the fast one.
func transcodeJSON(sig Signal, body []byte) ([]byte, error) {
	switch sig {
	case SignalLogs:
		req := plogotlp.NewExportRequest()
		if err := req.UnmarshalJSON(body); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	case SignalTraces:
		req := ptraceotlp.NewExportRequest()
		if err := req.UnmarshalJSON(body); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	default:
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalJSON(body); err != nil {
			return nil, err
		}
		return req.MarshalProto()
	}
}
