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
		// Lenient (a reload): every token in force is a line's, with its
		// tenant.
		loose, _ := parse(b, noDots, false)
		lines := map[[sha256.Size]byte]string{}
		for _, line := range strings.Split(string(b), "\n") {
			if fields := strings.Fields(line); len(fields) == 1 || len(fields) == 2 {
				lines[sha256.Sum256([]byte(fields[0]))] = strings.Join(fields[1:], "")
			}
		}
		for h, tenant := range loose {
			if want, ok := lines[h]; !ok || want != tenant {
				t.Fatalf("reload put in force a token with tenant %q that no line gives (%q, %v)", tenant, want, ok)
			}
		}
		tenants, err := parse(b, noDots, true)
		if err != nil {
			return
		}
		if len(loose) != len(tenants) {
			t.Fatalf("a file strict parsing accepts gives %d tokens strictly, %d on reload", len(tenants), len(loose))
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
