package otlpwire

import "google.golang.org/protobuf/encoding/protowire"

// ExportResponse is an encoded Export{Logs,Trace,Metrics}ServiceResponse,
// the answer of an OTLP server; the three signals share its shape:
//
//	message Export*ServiceResponse { Export*PartialSuccess partial_success = 1; }
//	message Export*PartialSuccess {
//	  int64 rejected_{log_records,spans,data_points} = 1; string error_message = 2;
//	}
//
// A full success is the empty message.
type ExportResponse []byte

// PartialSuccess returns partial_success's count of rejected records and
// its error message: 0 and nil for a full success. A partial_success given
// more than once merges field by field, as protobuf does. message aliases
// r. Errors are *Error values; it does not allocate unless it fails.
func (r ExportResponse) PartialSuccess() (rejected int64, message []byte, err error) {
	for i := 0; i < len(r); {
		t, _, s, j := field(r, i)
		if j < 0 || responseSchema.bad(t) {
			if err := responseSchema.failAt(r, i, t, j); err != nil {
				return 0, nil, err
			}
		}
		if protowire.Number(t>>3) == 1 {
			if err := readPartialSuccess(s, &rejected, &message); err != nil {
				return 0, nil, within(err, "partial_success", -1, j-len(s))
			}
		}
		i = j
	}
	return rejected, message, nil
}

var responseSchema = newSchema(map[protowire.Number]fieldSpec{1: bytesf("partial_success")})

// readPartialSuccess reads one Export*PartialSuccess over *rejected and
// *message.
func readPartialSuccess(b []byte, rejected *int64, message *[]byte) error {
	for i := 0; i < len(b); {
		t, v, s, j := field(b, i)
		if j < 0 || partialSuccessSchema.bad(t) {
			if err := partialSuccessSchema.failAt(b, i, t, j); err != nil {
				return err
			}
		}
		switch protowire.Number(t >> 3) {
		case 1:
			*rejected = int64(v)
		case 2:
			*message = s
		}
		i = j
	}
	return nil
}

var partialSuccessSchema = newSchema(map[protowire.Number]fieldSpec{1: varintf("rejected"), 2: bytesf("error_message")})
