package readapi

import (
	"encoding/hex"
	"strings"
	"testing"
	"time"
)

// FuzzParseTraceID: any text is a trace id or an error, never a panic;
// an id read back as 32 hex digits is the text, left-padded with zeros.
func FuzzParseTraceID(f *testing.F) {
	for _, s := range []string{"1", "0123456789abcdef0123456789abcdef", "ABCDEF", "xyz", "", "+1", "0x12", "1_2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseTraceID(s)
		if err != nil {
			return
		}
		got := hex.EncodeToString(id[:])
		if want := strings.Repeat("0", 32-len(s)) + strings.ToLower(s); got != want {
			t.Fatalf("ParseTraceID(%q) = %s", s, got)
		}
	})
}

// FuzzParseTimes: any text is a time or an error, never a panic; an
// integer count of microseconds reads back as itself.
func FuzzParseTimes(f *testing.F) {
	for _, s := range []string{"1700000000", "1700000000123456789", "1700000000.5", "2026-11-28T10:00:00Z", "NaN", "-1", "9223372036854775807", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ParseLokiTime(s) //nolint:errcheck // no panic is the property
		if tm, err := ParseEpoch(s, time.Microsecond); err == nil {
			if back := tm.UnixMicro(); strings.TrimLeft(s, "+") != "" && back != mustInt(s) {
				t.Fatalf("ParseEpoch(%q, µs) = %v (%d)", s, tm, back)
			}
		}
	})
}
