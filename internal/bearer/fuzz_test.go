package bearer

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// FuzzParse: a tokens file never panics the parser, and every file it
// accepts gives each of its token lines exactly the tenant written there.
func FuzzParse(f *testing.F) {
	f.Add([]byte("# exporters\n" + tokA + " team-a\n\n  " + tokB + "\t\n"))
	f.Add([]byte(tokA + "\n" + tokA + "\n"))
	f.Add([]byte(tokA + " a b\n"))
	f.Add([]byte("\x00\xff" + tokC + "\r\n"))
	f.Add([]byte(strings.Repeat("x", MaxTokenLen+1) + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tenants, err := parse(b, noDots)
		if err != nil {
			return
		}
		seen := 0
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			want := ""
			if len(fields) == 2 {
				want = fields[1]
			}
			got, ok := tenants[sha256.Sum256([]byte(fields[0]))]
			if !ok || got != want {
				t.Fatalf("line %q: tenant %q, %v; want %q", line, got, ok, want)
			}
			seen++
		}
		if seen != len(tenants) {
			t.Fatalf("%d token lines, %d tokens", seen, len(tenants))
		}
	})
}
