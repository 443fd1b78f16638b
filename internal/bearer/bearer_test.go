package bearer

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const (
	tokA = "aaaaaaaaaaaaaaaaaaaaaaaa"
	tokB = "bbbbbbbbbbbbbbbbbbbbbbbb"
	tokC = "cccccccccccccccccccccccc"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func noDots(s string) bool { return !strings.Contains(s, ".") }

func TestAuthenticate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	write(t, path, "# exporters\n"+tokA+" team-a\n\n  "+tokB+"\t\n")
	tok, err := Load(path, noDots, nil)
	if err != nil {
		t.Fatal(err)
	}
	for auth, want := range map[string]string{
		"Bearer " + tokA:         "team-a",
		"bearer " + tokA:         "team-a",
		"BEARER  " + tokB + "  ": "",
	} {
		if got, err := tok.Authenticate(auth); err != nil || got != want {
			t.Errorf("Authenticate(%q) = %q, %v; want %q", auth, got, err, want)
		}
	}
	for auth, want := range map[string]error{
		"":                            ErrMissing,
		"Basic " + tokA:               ErrMissing,
		tokA:                          ErrMissing,
		"Bearer " + tokC:              ErrUnknown,
		"Bearer " + tokA[:20]:         ErrUnknown,
		"Bearer " + tokA + "x":        ErrUnknown,
		"Bearer " + tokA + " " + tokB: ErrUnknown,
	} {
		_, err := tok.Authenticate(auth)
		if !errors.Is(err, want) {
			t.Errorf("Authenticate(%q) = %v, want %v", auth, err, want)
		}
		if err != nil && (strings.Contains(err.Error(), tokA) || strings.Contains(err.Error(), tokC)) {
			t.Errorf("error %q repeats the token", err)
		}
	}
}

// TestIdentify: role=operator marks an operator's token, with or without
// a tenant; once a file names a tenant or marks a token, the others are
// not operators', and a file of bare tokens (one tenant) makes all of
// them operators', as before the mark existed.
func TestIdentify(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content string
		want          map[string]Identity
	}{
		{"marked", tokA + " a role=operator\n" + tokB + " role=operator\n" + tokC + "\n", map[string]Identity{
			tokA: {Tenant: "a", Operator: true}, tokB: {Operator: true}, tokC: {}}},
		{"tenants", tokA + " a\n" + tokB + "\n", map[string]Identity{tokA: {Tenant: "a"}, tokB: {}}},
		{"bare", "# one tenant\n" + tokA + "\n" + tokB + "\n", map[string]Identity{tokA: {Operator: true}, tokB: {Operator: true}}},
	} {
		path := filepath.Join(dir, tc.name)
		write(t, path, tc.content)
		tok, err := Load(path, noDots, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for token, want := range tc.want {
			if got, err := tok.Identify("Bearer " + token); err != nil || got != want {
				t.Errorf("%s: Identify(%s) = %+v, %v; want %+v", tc.name, token[:1], got, err, want)
			}
			if got, err := tok.Authenticate("Bearer " + token); err != nil || got != want.Tenant {
				t.Errorf("%s: Authenticate(%s) = %q, %v; want %q", tc.name, token[:1], got, err, want.Tenant)
			}
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{
		"short token":    "short tenant\n",
		"space in token": tokA + " a b\n",
		"control byte":   tokA[:20] + "\x01bcd\n",
		"duplicate":      tokA + "\n" + tokA + " x\n",
		"bad tenant":     tokA + " a.b\n",
		"unknown role":   tokA + " a role=admin\n",
		"role first":     tokA + " role=operator a\n",
		"role twice":     tokA + " role=operator role=operator\n",
		"empty":          "# nothing\n\n",
	} {
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
		write(t, path, content)
		if _, err := Load(path, noDots, nil); err == nil {
			t.Errorf("%s: loaded", name)
		} else if strings.Contains(err.Error(), tokA) {
			t.Errorf("%s: error %q repeats the token", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing"), nil, nil); err == nil {
		t.Error("missing file loaded")
	}
}

// TestReload: a rewritten file takes effect without a restart; a broken
// one leaves the tokens in force.
func TestReload(t *testing.T) {
	old := reloadEvery
	defer func() { reloadEvery = old }()
	reloadEvery = 0
	path := filepath.Join(t.TempDir(), "tokens")
	write(t, path, tokA+" a\n")
	var mu sync.Mutex
	var reloads []string
	tok, err := Load(path, nil, func(n int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			reloads = append(reloads, "error")
		} else {
			reloads = append(reloads, strings.Repeat("x", n))
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, tokB+" b\n"+tokC+"\n") // tokA revoked, tokB and tokC added
	if _, err := tok.Authenticate("Bearer " + tokA); !errors.Is(err, ErrUnknown) {
		t.Errorf("revoked token: %v", err)
	}
	if got, err := tok.Authenticate("Bearer " + tokB); err != nil || got != "b" {
		t.Errorf("added token: %q, %v", got, err)
	}
	// A bad line is skipped; the other lines are in force, and a token
	// left out is revoked.
	write(t, path, "not a token file\n"+tokC+" c\n")
	if _, err := tok.Authenticate("Bearer " + tokB); !errors.Is(err, ErrUnknown) {
		t.Errorf("token left out of a file with a bad line: %v, want revoked", err)
	}
	if got, err := tok.Authenticate("Bearer " + tokC); err != nil || got != "c" {
		t.Errorf("good line beside a bad one: %q, %v", got, err)
	}
	// Emptied, or gone: every request refused.
	write(t, path, "# nobody\n")
	if _, err := tok.Authenticate("Bearer " + tokC); !errors.Is(err, ErrUnknown) || tok.Len() != 0 {
		t.Errorf("emptied file: %v, %d tokens; want everything refused", err, tok.Len())
	}
	write(t, path, tokA+" a\n")
	if _, err := tok.Authenticate("Bearer " + tokA); err != nil {
		t.Errorf("restored token: %v", err)
	}
	os.Remove(path)
	if _, err := tok.Authenticate("Bearer " + tokA); !errors.Is(err, ErrUnknown) {
		t.Errorf("file gone: %v, want everything refused", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(reloads, ","); !strings.HasPrefix(got, "xx,error,,x,error") {
		t.Errorf("reloads reported %v, want 2 tokens, an error, 0, 1, then errors", got)
	}
}

// TestSetDefaultTenant: a token naming the default tenant's name is the
// default tenant's, "", as one naming none; it still counts as naming a
// tenant, so the file's other tokens are not operators'.
func TestSetDefaultTenant(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	write(t, path, tokA+" default\n"+tokB+" team-b\n"+tokC+"\n")
	tok, err := Load(path, noDots, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok.SetDefaultTenant("default")
	for auth, want := range map[string]Identity{
		"Bearer " + tokA: {Tenant: ""},
		"Bearer " + tokB: {Tenant: "team-b"},
		"Bearer " + tokC: {Tenant: ""},
	} {
		if got, err := tok.Identify(auth); err != nil || got != want {
			t.Errorf("Identify(%q) = %+v, %v; want %+v", auth, got, err, want)
		}
	}
}
