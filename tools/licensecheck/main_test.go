package main

import (
	"errors"
	"testing"

	"github.com/google/go-licenses/licenses"
)

// countingClassifier names every file MIT, or fails for "bad", and
// counts its calls.
type countingClassifier struct{ calls map[string]int }

func (c *countingClassifier) Identify(path string) (string, licenses.Type, error) {
	c.calls[path]++
	if path == "bad" {
		return "", licenses.Unknown, errors.New("unknown license")
	}
	return "MIT", licenses.Notice, nil
}

// TestMemoClassifier: each file is classified once, and later calls get
// the first answer, its error included.
func TestMemoClassifier(t *testing.T) {
	c := &countingClassifier{calls: map[string]int{}}
	mc := &memoClassifier{c: c, m: map[string]identity{}}
	for range 3 {
		if name, typ, err := mc.Identify("a/LICENSE"); name != "MIT" || typ != licenses.Notice || err != nil {
			t.Fatalf("Identify = %q %v %v", name, typ, err)
		}
		if _, _, err := mc.Identify("bad"); err == nil {
			t.Fatal("the classifier's error was lost")
		}
	}
	if c.calls["a/LICENSE"] != 1 || c.calls["bad"] != 1 {
		t.Errorf("calls %v, want one a file", c.calls)
	}
}

// TestCheckRefuses: over this module's own packages (go-licenses'
// dependencies: Apache-2.0, MIT, BSD), an allow-list without
// Apache-2.0 refuses go-licenses itself, and the full list passes.
func TestCheckRefuses(t *testing.T) {
	bad, err := check(t.Context(), map[string]bool{"MIT": true, "BSD-3-Clause": true, "BSD-2-Clause": true}, false, nil, []string{"."})
	if err != nil || !bad {
		t.Errorf("without Apache-2.0: refused %v, %v; want refused", bad, err)
	}
	all := map[string]bool{}
	for _, n := range []string{"Apache-2.0", "MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "MPL-2.0", "Unlicense"} {
		all[n] = true
	}
	bad, err = check(t.Context(), all, false, []string{"github.com/wirehouse/wirehouse/tools/licensecheck"}, []string{"."})
	if err != nil || bad {
		t.Errorf("with the allow-list: refused %v, %v; want passed", bad, err)
	}
}
