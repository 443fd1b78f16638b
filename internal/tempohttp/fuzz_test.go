package tempohttp_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/tempohttp"
)

// FuzzParseTraceID: any text is a trace id or an error, never a panic;
// an id read back as 32 hex digits is the text, left-padded with zeros.
func FuzzParseTraceID(f *testing.F) {
	for _, s := range []string{"1", "0123456789abcdef0123456789abcdef", "ABCDEF", "xyz", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := tempohttp.ParseTraceID(s)
		if err != nil {
			return
		}
		got := hex.EncodeToString(id[:])
		if want := strings.Repeat("0", 32-len(s)) + strings.ToLower(s); got != want {
			t.Fatalf("ParseTraceID(%q) = %s", s, got)
		}
	})
}
