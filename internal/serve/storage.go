package serve

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wirehouse/wirehouse/internal/dirlock"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeload"
	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spool"
)

// openStorage creates the data directory and opens, in order, the
// quarantine, the metric store, the spool (repairing a torn tail, which it
// logs) and the loader that moves the spool into the lake, pushing each
// on s.stack. Each registers its own metrics with s.reg.
func (s *Server) openStorage() error {
	if err := os.MkdirAll(s.cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	lock, err := dirlock.Acquire(s.cfg.DataDir)
	if err != nil {
		if iu := (*dirlock.InUseError)(nil); errors.As(err, &iu) {
			by := "another process"
			if iu.PID > 0 {
				by += fmt.Sprintf(" (pid %d)", iu.PID)
			}
			return fmt.Errorf("data directory %s is in use by %s, another wirehouse serve most likely: stop it, or give this one another --data-dir", s.cfg.DataDir, by)
		}
		return err
	}
	s.stack.push("data directory lock", lock.Unlock)
	if err := s.step("quarantine"); err != nil {
		return err
	}
	q, err := quarantine.Open(quarantine.Config{Dir: filepath.Join(s.cfg.DataDir, "quarantine"), Registerer: s.reg})
	if err != nil {
		return err
	}
	s.quarantine = q

	if err := s.step("metric store"); err != nil {
		return err
	}
	if s.metrics, err = metricstore.Open(s.metricStoreConfig()); err != nil {
		return fmt.Errorf("open metric store: %w", err)
	}
	s.stack.push("metric store", s.metrics.Close)

	if err := s.step("spool"); err != nil {
		return err
	}
	if s.spool, err = spool.Open(s.spoolConfig()); err != nil {
		return fmt.Errorf("open spool: %w", err)
	}
	s.stack.push("spool", s.spool.Close)
	for _, r := range s.spool.Repairs() {
		s.log.Warn("spool: repaired a torn or corrupt tail", "segment", r.Segment, "offset", r.Offset, "err", r.Err)
	}

	if err := s.step("lake loader"); err != nil {
		return err
	}
	if s.loader, err = lakeload.New(s.spool, lakeload.Config{
		Dir:        filepath.Join(s.cfg.DataDir, "lake"),
		Consumer:   "lake",
		MaxDelay:   s.cfg.Lake.MaxDelay,
		FileSize:   int64(s.cfg.Lake.FileSize),
		Buffer:     int64(s.cfg.Lake.MaxBuffer),
		Retention:  lake.Retention{MaxAge: s.cfg.Lake.Retention, MaxSize: int64(s.cfg.Lake.RetentionSize)},
		Compact:    s.cfg.Lake.Compact,
		Logger:     s.log,
		Quarantine: s.quarantine,
		Registerer: s.reg,
	}); err != nil {
		return fmt.Errorf("open lake: %w", err)
	}
	s.stack.push("lake loader", s.loader.Close)
	return nil
}

// metricStoreConfig is the metric store's config, in
// <data_dir>/metrics, from the server's.
func (s *Server) metricStoreConfig() metricstore.Config {
	c := s.cfg.Metrics
	mc := metricstore.DefaultConfig()
	mc.Dir = filepath.Join(s.cfg.DataDir, "metrics")
	mc.Retention = c.Retention
	mc.RetentionSize = int64(c.RetentionSize)
	mc.OutOfOrderWindow = c.OutOfOrderWindow
	mc.MinBlockDuration, mc.MaxBlockDuration = c.BlockDuration, 0
	mc.MaxExemplars = c.MaxExemplars
	mc.ScopeLabels = c.PromoteScopeMetadata
	mc.LabelLimit = c.LabelLimit
	mc.Logger = s.log
	mc.Registerer = s.reg
	if c.PromoteAll {
		mc.PromoteAllResourceAttributes, mc.IgnoredResourceAttributes = true, c.IgnoreAttributes
	} else {
		mc.PromotedResourceAttributes = c.PromoteAttributes
	}
	return mc
}

// spoolConfig is the spool's config, in <data_dir>/spool, from the
// server's.
func (s *Server) spoolConfig() spool.Config {
	c := s.cfg.Spool
	sc := spool.DefaultConfig()
	sc.Dir = filepath.Join(s.cfg.DataDir, "spool")
	sc.Sync, _ = spool.ParseSyncPolicy(c.Sync) // checked by Validate
	sc.SyncInterval = c.SyncInterval
	sc.SegmentSize = int64(c.SegmentSize)
	sc.MaxBytes = int64(c.MaxSize)
	sc.Registerer = s.reg
	return sc
}
