package bearer

import (
	"crypto/sha256"
	"strings"
	"testing"
)

// lineIdentity is the identity the documented format gives a line's
// token, and whether the line has that shape (its token and tenant still
// to be checked).
func lineIdentity(fields []string) (Identity, bool) {
	switch {
	case len(fields) == 1:
		return Identity{}, true
	case len(fields) == 2 && fields[1] == RoleOperator:
		return Identity{Operator: true}, true
	case len(fields) == 2 && !strings.Contains(fields[1], "="):
		return Identity{Tenant: fields[1]}, true
	case len(fields) == 3 && !strings.Contains(fields[1], "=") && fields[2] == RoleOperator:
		return Identity{Tenant: fields[1], Operator: true}, true
	}
	return Identity{}, false
}

// FuzzParse: a tokens file never panics the parser, and every file it
// accepts gives each of its token lines exactly the tenant and role
// written there (every token an operator's when no line names a tenant or
// a role).
func FuzzParse(f *testing.F) {
	f.Add([]byte("# exporters\n" + tokA + " team-a\n\n  " + tokB + "\t\n"))
	f.Add([]byte(tokA + "\n" + tokA + "\n"))
	f.Add([]byte(tokA + " a b\n"))
	f.Add([]byte("\x00\xff" + tokC + "\r\n"))
	f.Add([]byte(strings.Repeat("x", MaxTokenLen+1) + "\n"))
	f.Add([]byte(tokA + " a role=operator\n" + tokB + " role=operator\n" + tokC + "\n"))
	f.Add([]byte(tokA + " role=admin\n" + tokB + "\n"))
	f.Add([]byte(tokA + "\n" + tokB + "\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		marked := false
		lines := map[[sha256.Size]byte][]Identity{} // a token may be on several lines
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			marked = marked || len(fields) > 1
			if id, ok := lineIdentity(fields); ok {
				h := sha256.Sum256([]byte(fields[0]))
				lines[h] = append(lines[h], id)
			}
		}
		given := func(h [sha256.Size]byte, id Identity) bool {
			for _, w := range lines[h] {
				if w.Operator = w.Operator || !marked; w == id {
					return true
				}
			}
			return false
		}
		// Lenient (a reload): every token in force is a line's, with its
		// identity.
		loose, _ := parse(b, noDots, false)
		for h, id := range loose {
			if !given(h, id) {
				t.Fatalf("reload put in force a token as %+v that no line gives (%+v)", id, lines[h])
			}
		}
		tokens, err := parse(b, noDots, true)
		if err != nil {
			return
		}
		if len(loose) != len(tokens) {
			t.Fatalf("a file strict parsing accepts gives %d tokens strictly, %d on reload", len(tokens), len(loose))
		}
		seen := 0
		for _, line := range strings.Split(string(b), "\n") {
			fields := strings.Fields(line)
			if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
				continue
			}
			w, _ := lineIdentity(fields)
			w.Operator = w.Operator || !marked
			got, ok := tokens[sha256.Sum256([]byte(fields[0]))]
			if !ok || got != w {
				t.Fatalf("line %q: %+v, %v; want %+v", line, got, ok, w)
			}
			seen++
		}
		if seen != len(tokens) {
			t.Fatalf("%d token lines, %d tokens", seen, len(tokens))
		}
	})
}
