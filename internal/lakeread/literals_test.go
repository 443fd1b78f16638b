package lakeread

import (
	"fmt"
	"regexp"
	"testing"

	"github.com/wirehouse/wirehouse/internal/lake"
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

// TestNoneInRange: a file's counts skip it only when none of its
// minutes of a selected service can hold a time in [lo, hi): a minute m
// holds the times ((m-1)*CountsMinute, m*CountsMinute].
func TestNoneInRange(t *testing.T) {
	const m = 29_000_000 // a minute
	c := &lake.Counts{Names: []string{"a", "b"}, Entries: []lake.CountsEntry{{Service: 0, Minute: m, N: 3}, {Service: 1, Minute: m + 10, N: 1}}}
	first, last := (m-1)*lake.CountsMinute+1, m*lake.CountsMinute
	onlyA := func(s string) bool { return s == "a" }
	for _, tc := range []struct {
		lo, hi  int64
		service func(string) bool
		none    bool
	}{
		{last, last + 1, onlyA, false}, // the minute's last time
		{last + 1, last + 100, onlyA, true},
		{first - 100, first, onlyA, true}, // ends before the minute's first time
		{first - 100, first + 1, onlyA, false},
		{first, last + 1, nil, false},
		{last + 1, (m + 10) * lake.CountsMinute, onlyA, true}, // b's minute, b not selected
		{last + 1, (m+10)*lake.CountsMinute + 1, nil, false},  // b's minute, any service
		{(m + 10) * lake.CountsMinute, (m + 20) * lake.CountsMinute, onlyA, true},
	} {
		if got := noneInRange(c, tc.lo, tc.hi, tc.service); got != tc.none {
			t.Errorf("[%d, %d) (minute %d is [%d, %d]): none %v, want %v", tc.lo, tc.hi, m, first, last, got, tc.none)
		}
	}
}
