// Package spoolsink is the receiver's sink for logs and traces (and for
// metrics when they are forwarded): it appends
// each validated request to the spool and returns once the spool's fsync
// policy is met, so the receiver acknowledges only what the spool holds.
// lakeload then moves the spool into the lake, and forward sends it on.
//
// A full spool refuses the request as overloaded (HTTP 429, gRPC
// RESOURCE_EXHAUSTED, retryable); a request larger than the whole spool
// may hold is refused for good (413).
package spoolsink

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Sink appends requests to a spool.
type Sink struct {
	spool  *spool.Spool
	tenant string
}

// New returns a sink that appends to sp under defaultTenant, or under
// the tenant a request's credentials name (pipeline.Request.Tenant).
func New(sp *spool.Spool, defaultTenant string) (*Sink, error) {
	if !tenant.Valid(defaultTenant) {
		return nil, fmt.Errorf("spool sink: tenant %q: want 1 to 128 of [A-Za-z0-9._-]", defaultTenant)
	}
	return &Sink{spool: sp, tenant: defaultTenant}, nil
}

// Consume appends the request's body to the spool.
func (s *Sink) Consume(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
	sig := req.Signal
	if !sig.Valid() {
		return pipeline.Outcome{}, fmt.Errorf("spool sink: %v: %w", sig, pipeline.ErrInvalid)
	}
	name := s.tenant
	if req.Tenant != "" { // the exporter's credentials named one
		if !tenant.Valid(req.Tenant) {
			return pipeline.Outcome{}, fmt.Errorf("spool sink: tenant %q: %w", req.Tenant, pipeline.ErrInvalid)
		}
		name = req.Tenant
	}
	if _, err := s.spool.Append(sig, name, time.Now(), req.Body); err != nil {
		if errors.Is(err, spool.ErrFull) {
			return pipeline.Outcome{}, fmt.Errorf("spool full: %w", pipeline.ErrOverloaded)
		}
		if errors.Is(err, spool.ErrTooLarge) { // larger than the whole spool may hold
			return pipeline.Outcome{}, fmt.Errorf("spool append: %v: %w", err, pipeline.ErrTooLarge)
		}
		return pipeline.Outcome{}, fmt.Errorf("spool append: %v: %w", err, pipeline.ErrUnavailable)
	}
	return pipeline.Outcome{}, nil
}
