package spool

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// SyncPolicy says when segment data is fsynced; see the package doc for
// what each policy guarantees.
type SyncPolicy int

const (
	// SyncInterval fsyncs in the background every interval (default
	// 100 ms). It is the default policy.
	SyncInterval SyncPolicy = iota
	// SyncAlways makes Append return only after an fsync that covers the
	// record. Concurrent Appends share fsyncs (group commit).
	SyncAlways
	// SyncNever leaves flushing to the operating system.
	SyncNever
)

// DefaultSyncInterval is the period of SyncInterval when WithSync is given
// no interval.
const DefaultSyncInterval = 100 * time.Millisecond

// DefaultSegmentSize is the segment size when WithSegmentSize is not given.
const DefaultSegmentSize = 64 << 20

// String returns "interval", "always" or "never".
func (p SyncPolicy) String() string {
	switch p {
	case SyncInterval:
		return "interval"
	case SyncAlways:
		return "always"
	case SyncNever:
		return "never"
	}
	return "SyncPolicy(" + strconv.Itoa(int(p)) + ")"
}

// ParseSyncPolicy parses "always", "interval" or "never".
func ParseSyncPolicy(s string) (SyncPolicy, error) {
	for _, p := range []SyncPolicy{SyncAlways, SyncInterval, SyncNever} {
		if s == p.String() {
			return p, nil
		}
	}
	return 0, fmt.Errorf("spool: unknown sync policy %q (want always, interval or never)", s)
}

// config holds the settings Options change; defaultConfig has the defaults.
type config struct {
	segmentSize int64
	sync        SyncPolicy
	interval    time.Duration
	maxBytes    int64
	reg         prometheus.Registerer
}

func defaultConfig() config {
	return config{
		segmentSize: DefaultSegmentSize,
		sync:        SyncInterval,
		interval:    DefaultSyncInterval,
	}
}

// Option changes a setting of Open. An Option returns an error for an
// invalid value, and Open returns it.
type Option func(*config) error

// WithSegmentSize sets the size at which a new segment file is started
// (default DefaultSegmentSize, 64 MiB): a record goes into a new segment
// when it would take the current one past n bytes. A record larger than n
// gets a segment of its own. n must be positive.
func WithSegmentSize(n int64) Option {
	return func(c *config) error {
		if n <= 0 {
			return fmt.Errorf("spool: segment size %d, must be positive", n)
		}
		c.segmentSize = n
		return nil
	}
}

// WithSync sets the fsync policy (default SyncInterval). interval is the
// period of SyncInterval, DefaultSyncInterval if 0; the other policies
// ignore it. A negative interval is an error.
func WithSync(p SyncPolicy, interval time.Duration) Option {
	return func(c *config) error {
		switch {
		case p != SyncAlways && p != SyncInterval && p != SyncNever:
			return fmt.Errorf("spool: unknown sync policy %d", int(p))
		case interval < 0:
			return fmt.Errorf("spool: sync interval %v, must not be negative", interval)
		case interval == 0:
			interval = DefaultSyncInterval
		}
		c.sync, c.interval = p, interval
		return nil
	}
}

// WithMaxBytes bounds the total size of the segment files (default 0:
// unbounded). Append returns ErrFull rather than go past it, and
// ErrTooLarge for a record that alone exceeds it. n must not be negative.
func WithMaxBytes(n int64) Option {
	return func(c *config) error {
		if n < 0 {
			return errors.New("spool: negative maximum size")
		}
		c.maxBytes = n
		return nil
	}
}

// WithRegisterer makes Open register the spool's metrics with reg
// (default: none): wirehouse_spool_bytes, _segments, _last_seq,
// _appends_total, _syncs_total and _full_total, read from Stats when
// scraped.
func WithRegisterer(reg prometheus.Registerer) Option {
	return func(c *config) error {
		c.reg = reg
		return nil
	}
}
