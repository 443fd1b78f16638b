package tenant

import (
	"context"
	"strings"
	"testing"
)

func TestContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want string
	}{
		{"none", context.Background(), ""},
		{"default", NewContext(context.Background(), ""), ""},
		{"named", NewContext(context.Background(), "acme"), "acme"},
		{"innermost", NewContext(NewContext(context.Background(), "a"), "b"), "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromContext(tc.ctx); got != tc.want {
				t.Errorf("FromContext = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"acme", true}, {"team-a.prod_1", true}, {strings.Repeat("x", MaxLen), true},
		{"", false}, {".", false}, {"..", false}, {"a/b", false}, {"a b", false}, {"é", false},
		{strings.Repeat("x", MaxLen+1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Valid(tc.name); got != tc.ok {
				t.Errorf("Valid(%q) = %v, want %v", tc.name, got, tc.ok)
			}
		})
	}
}
