// Package lease gives one node of several sharing a bucket the right to
// do a job alone for a while (compacting and pruning the lake), with the
// bucket's conditional writes (bucket.Conditional: S3's If-None-Match and
// If-Match) as the only coordination: no other service to run.
//
// The lease is one small JSON object naming its holder and when it
// expires. A node takes it when it is absent or expired, and renews it
// before it expires, each with a write conditional on the version it
// read, so of nodes racing for it exactly one wins. A holder that cannot
// renew in time (a pause, a partition from the store) stops at once:
// Held is false once less than a safety margin of the lease is left by
// this node's clock. Nodes' clocks must agree to well within the TTL (a
// minute by default); a lease is no fence for a process paused longer.
package lease

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Lease is one node's handle on a lease object. Its methods are safe for
// concurrent use.
type Lease struct {
	b      bucket.Conditional
	name   string
	holder string
	ttl    time.Duration
	now    func() time.Time

	mu      sync.Mutex
	version string    // of the object this node last wrote; "" when not held
	until   time.Time // by this node's clock: held until then, less the margin
}

// record is the lease object's content, JSON (the page of the
// compaction lease, docs/format/lake-compaction.md, describes it).
type record struct {
	Holder  string    `json:"holder"`
	Expires time.Time `json:"expires"`
}

// Option sets a Lease's TTL or clock.
type Option func(*Lease)

// WithTTL sets how long a lease lasts after it is taken or renewed
// (default one minute).
func WithTTL(d time.Duration) Option { return func(l *Lease) { l.ttl = d } }

// WithClock sets the clock (tests).
func WithClock(now func() time.Time) Option { return func(l *Lease) { l.now = now } }

// New returns holder's handle on the lease object name of b. holder must
// be unique among the nodes.
func New(b bucket.Conditional, name, holder string, opts ...Option) (*Lease, error) {
	l := &Lease{b: b, name: name, holder: holder, ttl: time.Minute, now: time.Now}
	for _, o := range opts {
		o(l)
	}
	switch {
	case holder == "":
		return nil, errors.New("lease: empty holder")
	case l.ttl < time.Second:
		return nil, fmt.Errorf("lease: TTL %v under a second", l.ttl)
	}
	if err := bucket.ValidName(name); err != nil {
		return nil, fmt.Errorf("lease: %w", err)
	}
	return l, nil
}

// Acquire takes the lease, or renews it if this node holds it, and
// reports whether this node holds it now. Another node's unexpired lease
// is false without an error.
func (l *Lease) Acquire(ctx context.Context) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	data, version, err := l.b.GetVersion(ctx, l.name)
	switch {
	case errors.Is(err, bucket.ErrNotFound):
		version = ""
	case err != nil:
		l.version = ""
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	default:
		var r record
		if json.Unmarshal(data, &r) == nil && r.Holder != l.holder && l.now().Before(r.Expires) {
			l.version = ""
			return false, nil // another node's, and live
		}
		// Ours, expired, or unreadable: replace it, if no one else does
		// first.
	}
	start := l.now()
	data, err = json.Marshal(record{Holder: l.holder, Expires: start.Add(l.ttl)})
	if err != nil {
		return false, err
	}
	v, err := l.b.UploadIf(ctx, l.name, data, version)
	if errors.Is(err, bucket.ErrPrecondition) {
		l.version = ""
		return false, nil // another node came first
	}
	if err != nil {
		l.version = ""
		return false, fmt.Errorf("lease %s: %w", l.name, err)
	}
	l.version, l.until = v, start.Add(l.ttl-l.margin())
	return true, nil
}

// margin is the part of the TTL a holder does not use: for the clocks'
// disagreement and the time the last step of a job takes.
func (l *Lease) margin() time.Duration { return l.ttl / 3 }

// Held reports whether this node holds the lease now, with the margin to
// spare: the last Acquire took it and it has not run out.
func (l *Lease) Held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.version != "" && l.now().Before(l.until)
}

// Release gives the lease up, if this node holds it, so that another node
// need not wait for it to expire.
func (l *Lease) Release(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.version == "" {
		return nil
	}
	data, err := json.Marshal(record{Holder: l.holder, Expires: time.Unix(0, 0).UTC()})
	if err != nil {
		return err
	}
	_, err = l.b.UploadIf(ctx, l.name, data, l.version)
	l.version = ""
	if err != nil && !errors.Is(err, bucket.ErrPrecondition) {
		return fmt.Errorf("lease %s: release: %w", l.name, err)
	}
	return nil
}
