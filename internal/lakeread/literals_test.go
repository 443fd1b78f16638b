package lakeread

import (
	"fmt"
	"regexp"
	"testing"
)

// TestRequiredLiterals: the literals taken from a regular expression are
// substrings of every match, and none is taken where a match need not
// hold one (alternations, case folding, optional parts).
func TestRequiredLiterals(t *testing.T) {
	for re, want := range map[string]string{
		`status=5[0-9][0-9]`: `[status=5]`,
		`(?i)status=5`:       `[]`,
		`a|bcd`:              `[]`,
		`(foo)bar.*baz`:      `[foo bar baz]`,
		`^abc$`:              `[abc]`,
		`ab+c`:               `[a c]`,
		`(abc)?def`:          `[def]`,
		`x(?i:yz)w`:          `[x w]`,
		`[0-9]+ms`:           `[ms]`,
		`é{2}`:               `[é é]`,
		``:                   `[]`,
	} {
		var got []string
		for _, l := range requiredLiterals(regexp.MustCompile(re)) {
			got = append(got, string(l))
		}
		if s := fmt.Sprint(got); s != want && !(want == "[]" && len(got) == 0) {
			t.Errorf("requiredLiterals(%q) = %s, want %s", re, s, want)
		}
	}
}
