package tenant

import (
	"context"
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
