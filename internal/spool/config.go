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
	// SyncInterval fsyncs in the background every Config.SyncInterval
	// (default 100 ms). It is the default policy.
	SyncInterval SyncPolicy = iota
	// SyncAlways makes Append return only after an fsync that covers the
	// record. Concurrent Appends share fsyncs (group commit).
	SyncAlways
	// SyncNever leaves flushing to the operating system.
	SyncNever
)

// DefaultSyncInterval is the period of SyncInterval when
// Config.SyncInterval is 0.
const DefaultSyncInterval = 100 * time.Millisecond

// DefaultSegmentSize is DefaultConfig's SegmentSize.
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

// Config configures a Spool. Start from DefaultConfig and set Dir;
// Validate reports what Open would refuse.
type Config struct {
	// Dir is the spool's directory, created if needed. It must be set.
	Dir string
	// SegmentSize is the size at which a new segment file is started
	// (default DefaultSegmentSize, 64 MiB): a record goes into a new
	// segment when it would take the current one past SegmentSize bytes.
	// A record larger than SegmentSize gets a segment of its own. It must
	// be positive.
	SegmentSize int64
	// Sync is the fsync policy (default SyncInterval).
	Sync SyncPolicy
	// SyncInterval is the period of the SyncInterval policy, default
	// DefaultSyncInterval, which 0 also means; the other policies ignore
	// it. It must not be negative.
	SyncInterval time.Duration
	// MaxBytes bounds the total size of the segment files (default 0:
	// unbounded). Append returns ErrFull rather than go past it, and
	// ErrTooLarge for a record that alone exceeds it. It must not be
	// negative.
	MaxBytes int64
	// TailBytes keeps a copy of the newest records' payloads in memory,
	// up to this many bytes (default 0: none), from which Next serves
	// consumers that keep up without reading the file back or checking
	// the checksum again (the bytes were never off the process). While
	// every consumer reads behind the oldest copy, no copies are made
	// until one has caught up. It must not be negative.
	TailBytes int64
	// Registerer, if not nil, gets the spool's metrics (default none):
	// wirehouse_spool_bytes, _segments, _last_seq, _appends_total,
	// _syncs_total and _full_total, read from Stats when scraped.
	Registerer prometheus.Registerer
}

// DefaultConfig returns the defaults, without a Dir: 64 MiB segments,
// SyncInterval every 100 ms, no size limit, no metrics.
func DefaultConfig() Config {
	return Config{
		SegmentSize:  DefaultSegmentSize,
		Sync:         SyncInterval,
		SyncInterval: DefaultSyncInterval,
	}
}

// Validate reports the first field of c that Open would refuse.
func (c Config) Validate() error {
	switch {
	case c.Dir == "":
		return errors.New("spool: Dir not set")
	case c.SegmentSize <= 0:
		return fmt.Errorf("spool: SegmentSize %d, must be positive", c.SegmentSize)
	case c.Sync != SyncAlways && c.Sync != SyncInterval && c.Sync != SyncNever:
		return fmt.Errorf("spool: unknown Sync policy %d", int(c.Sync))
	case c.SyncInterval < 0:
		return fmt.Errorf("spool: SyncInterval %v, must not be negative", c.SyncInterval)
	case c.MaxBytes < 0:
		return fmt.Errorf("spool: MaxBytes %d, must not be negative", c.MaxBytes)
	case c.TailBytes < 0:
		return fmt.Errorf("spool: TailBytes %d, must not be negative", c.TailBytes)
	}
	return nil
}
