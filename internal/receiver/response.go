package receiver

import (
	"encoding/json"
	"strconv"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/protobuf/encoding/protowire"
)

// appendResponse appends an Export*ServiceResponse in protobuf form. All
// three signals share its shape:
//
//	message Export{Logs,Trace,Metrics}ServiceResponse {
//	  Export*PartialSuccess partial_success = 1;
//	}
//	message Export*PartialSuccess {
//	  int64 rejected_{log_records,spans,data_points} = 1;
//	  string error_message = 2;
//	}
//
// A full success is the empty message.
func appendResponse(dst []byte, out pipeline.Outcome) []byte {
	if out.Rejected == 0 && out.Message == "" {
		return dst
	}
	n := 0
	if out.Rejected != 0 {
		n += 1 + protowire.SizeVarint(uint64(out.Rejected))
	}
	if out.Message != "" {
		n += 1 + protowire.SizeBytes(len(out.Message))
	}
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(n))
	if out.Rejected != 0 {
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(out.Rejected))
	}
	if out.Message != "" {
		dst = protowire.AppendTag(dst, 2, protowire.BytesType)
		dst = protowire.AppendString(dst, out.Message)
	}
	return dst
}

// appendResponseJSON appends the OTLP/JSON form of the response, with the
// int64 as a string as the proto3 JSON mapping writes it.
func appendResponseJSON(dst []byte, sig otlpwire.Signal, out pipeline.Outcome) []byte {
	if out.Rejected == 0 && out.Message == "" {
		return append(dst, "{}"...)
	}
	dst = append(dst, `{"partialSuccess":{`...)
	sep := false
	if out.Rejected != 0 {
		dst = append(dst, '"')
		dst = append(dst, rejectedField(sig)...)
		dst = append(dst, `":"`...)
		dst = strconv.AppendInt(dst, out.Rejected, 10)
		dst = append(dst, '"')
		sep = true
	}
	if out.Message != "" {
		if sep {
			dst = append(dst, ',')
		}
		dst = append(dst, `"errorMessage":`...)
		dst = appendJSONString(dst, out.Message)
	}
	return append(dst, "}}"...)
}

// appendStatus appends a google.rpc.Status, the body of OTLP/HTTP error
// responses:
//
//	message Status {
//	  int32 code = 1;
//	  string message = 2;
//	  repeated google.protobuf.Any details = 3;
//	}
func appendStatus(dst []byte, code int32, msg string) []byte {
	if code != 0 {
		dst = protowire.AppendTag(dst, 1, protowire.VarintType)
		dst = protowire.AppendVarint(dst, uint64(int64(code)))
	}
	if msg != "" {
		dst = protowire.AppendTag(dst, 2, protowire.BytesType)
		dst = protowire.AppendString(dst, msg)
	}
	return dst
}

// appendStatusJSON appends the JSON form of a google.rpc.Status.
func appendStatusJSON(dst []byte, code int32, msg string) []byte {
	dst = append(dst, `{"code":`...)
	dst = strconv.AppendInt(dst, int64(code), 10)
	dst = append(dst, `,"message":`...)
	dst = appendJSONString(dst, msg)
	return append(dst, '}')
}

func appendJSONString(dst []byte, s string) []byte {
	b, err := json.Marshal(s)
	if err != nil { // cannot happen for a string
		return append(dst, `""`...)
	}
	return append(dst, b...)
}
