package serve

import (
	"fmt"
	"os"
	"path/filepath"

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
	if err := s.step("quarantine"); err != nil {
		return err
	}
	q, err := quarantine.Open(filepath.Join(s.cfg.DataDir, "quarantine"), s.reg)
	if err != nil {
		return err
	}
	s.quarantine = q

	if err := s.step("metric store"); err != nil {
		return err
	}
	if s.metrics, err = metricstore.Open(filepath.Join(s.cfg.DataDir, "metrics"), s.metricStoreOptions()...); err != nil {
		return fmt.Errorf("open metric store: %w", err)
	}
	s.stack.push("metric store", s.metrics.Close)

	if err := s.step("spool"); err != nil {
		return err
	}
	policy, _ := spool.ParseSyncPolicy(s.cfg.Spool.Sync) // checked by Validate
	if s.spool, err = spool.Open(filepath.Join(s.cfg.DataDir, "spool"),
		spool.WithSync(policy, s.cfg.Spool.SyncInterval),
		spool.WithSegmentSize(int64(s.cfg.Spool.SegmentSize)),
		spool.WithMaxBytes(int64(s.cfg.Spool.MaxSize)),
		spool.WithRegisterer(s.reg)); err != nil {
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

// metricStoreOptions are the metric store's options from the config.
func (s *Server) metricStoreOptions() []metricstore.Option {
	c := s.cfg.Metrics
	opts := []metricstore.Option{
		metricstore.WithRetention(c.Retention),
		metricstore.WithRetentionSize(int64(c.RetentionSize)),
		metricstore.WithOutOfOrderWindow(c.OutOfOrderWindow),
		metricstore.WithBlockDuration(c.BlockDuration, 0),
		metricstore.WithMaxExemplars(c.MaxExemplars),
		metricstore.WithScopeLabels(c.PromoteScopeMetadata),
		metricstore.WithLabelLimit(c.LabelLimit),
		metricstore.WithLogger(s.log),
		metricstore.WithRegisterer(s.reg),
	}
	if c.PromoteAll {
		opts = append(opts, metricstore.WithPromoteAllResourceAttributes(c.IgnoreAttributes...))
	} else if len(c.PromoteAttributes) > 0 {
		opts = append(opts, metricstore.WithPromotedResourceAttributes(c.PromoteAttributes...))
	}
	return opts
}
