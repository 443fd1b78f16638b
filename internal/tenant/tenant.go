// Package tenant carries the tenant a request acts for in its context,
// from where the request is authenticated (bearer tokens) to the storage
// that keeps tenants apart (the metric store, the lake), and says which
// tenant names are valid. The empty name is the default tenant: the one of
// requests whose credentials name none, or name the server's default
// tenant, and of every request when no credentials are configured.
package tenant

import "context"

type key struct{}

// NewContext returns a copy of ctx that carries tenant t; "" is the
// default tenant.
func NewContext(ctx context.Context, t string) context.Context {
	return context.WithValue(ctx, key{}, t)
}

// FromContext returns the tenant ctx carries, "" (the default tenant)
// when it carries none.
func FromContext(ctx context.Context) string {
	t, _ := ctx.Value(key{}).(string)
	return t
}

// MaxLen is the longest tenant name.
const MaxLen = 128

// Valid reports whether t is a tenant name: 1 to MaxLen of
// [A-Za-z0-9._-], and neither "." nor "..", so that it is safe as one
// segment of a path (the lake's and the spool's partitions) and as a label
// value.
func Valid(t string) bool {
	if t == "" || len(t) > MaxLen || t == "." || t == ".." {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}
