// Package tenant carries the tenant a request acts for in its context,
// from where the request is authenticated (the admin server's bearer
// tokens) to the storage that keeps tenants apart (metricstore). The empty
// name is the default tenant: the one of requests whose credentials name
// none, or name the server's default tenant, and of every request when no
// credentials are configured.
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
