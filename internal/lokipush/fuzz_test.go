package lokipush_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// checkOut fails t unless out is a logs request pdata reads with as many
// records as entries kept.
func checkOut(t *testing.T, out []byte, entries, refused int) {
	t.Helper()
	if refused > entries || refused < 0 {
		t.Fatalf("%d refused of %d entries", refused, entries)
	}
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(out)
	if err != nil {
		t.Fatalf("the OTLP written does not decode: %v", err)
	}
	if n := ld.LogRecordCount(); n != entries-refused {
		t.Fatalf("%d records for %d entries, %d refused", n, entries, refused)
	}
}

// smallStreams are testStreams but for the long line (small seeds fuzz
// faster).
func smallStreams() []testStream {
	s := testStreams()
	s[0].es = s[0].es[:3]
	return s
}

// FuzzProto: any bytes as a protobuf push decode to an error or to a
// logs request of the entries kept, never a panic.
func FuzzProto(f *testing.F) {
	f.Add(pushProto(smallStreams()))
	f.Add(pushProto(testStreams()[1:3]))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	f.Fuzz(func(t *testing.T, b []byte) {
		out, st, err := decoder().Proto(nil, b)
		if err == nil {
			checkOut(t, out, st.Entries, st.Refused)
		}
	})
}

// FuzzJSON: any bytes as a JSON push decode to an error or to a logs
// request of the entries kept, never a panic.
func FuzzJSON(f *testing.F) {
	f.Add(pushJSON(smallStreams()))
	f.Add([]byte(`{"streams":[{"stream":{"job":"x"},"values":[["1764504000000000000","line",{"k":"v"}]]}]}`))
	f.Add([]byte(`{"streams":[{"stream":{},"values":[]}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		out, st, err := decoder().JSON(nil, b)
		if err == nil {
			checkOut(t, out, st.Entries, st.Refused)
		}
	})
}
