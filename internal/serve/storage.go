package serve

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/deletes"
	"github.com/wirehouse/wirehouse/internal/dirlock"
	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/internal/forward"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeload"
	"github.com/wirehouse/wirehouse/internal/metricstore"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/otlpwire"
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

	if err := s.step("remote write"); err != nil {
		return err
	}
	if err := s.openRemoteWrite(); err != nil {
		return err
	}
	if err := s.step("metric store"); err != nil {
		return err
	}
	if s.metrics, err = metricstore.Open(s.metricStoreConfig()); err != nil {
		return fmt.Errorf("open metric store: %w", err)
	}
	s.stack.push("metric store", s.metrics.Close)
	s.startTenantRetention()
	if err := s.startRemoteWrite(); err != nil {
		return err
	}

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
	if err := s.openLake(); err != nil {
		return err
	}
	if s.loader, err = lakeload.New(s.spool, lakeload.Config{
		Dir:          filepath.Join(s.cfg.DataDir, "lake"),
		Bucket:       s.lakeBucket,
		Node:         s.lakeNode,
		Consumer:     "lake",
		Signals:      s.lakeSignals(),
		MaxDelay:     s.cfg.Lake.MaxDelay,
		FileSize:     int64(s.cfg.Lake.FileSize),
		Buffer:       int64(s.cfg.Lake.MaxBuffer),
		Retention:    s.lakeRetention(),
		Compact:      s.cfg.Lake.Compact,
		CompactGrace: s.cfg.Lake.CompactGrace,
		NoIndexes:    s.cfg.Lake.NoIndexes,
		Logger:       s.log,
		Quarantine:   s.quarantine,
		Registerer:   s.reg,
		Rewrite:      s.rewriteLake,
		Drop:         s.dropPending,
	}); err != nil {
		return fmt.Errorf("open lake: %w", err)
	}
	s.stack.push("lake loader", s.loader.Close)
	if s.cfg.Store.Logs || s.cfg.Store.Traces {
		b := s.lakeBucket
		if b == nil {
			b = bucket.NewLocal(filepath.Join(s.cfg.DataDir, "lake"))
		}
		if s.deletes, err = deletes.New(deletes.Config{Bucket: b, Node: s.lakeNode, Logger: s.log,
			Through: func() uint64 { return s.spool.Stats().LastSeq }, Kick: s.loader.Kick}); err != nil {
			return err
		}
	}

	if err := s.step("forward"); err != nil {
		return err
	}
	if err := s.openForward(); err != nil {
		return err
	}
	return s.openTraceMetrics()
}

// lakeSignals are the signals the lake stores (store.logs, store.traces).
func (s *Server) lakeSignals() []otlpwire.Signal {
	sigs := []otlpwire.Signal{}
	if s.cfg.Store.Logs {
		sigs = append(sigs, otlpwire.SignalLogs)
	}
	if s.cfg.Store.Traces {
		sigs = append(sigs, otlpwire.SignalTraces)
	}
	return sigs
}

// openForward opens a destination for each forward entry, and removes
// the spool cursor of any destination no longer configured (its
// undelivered records, counted in the log, are not sent: it was removed
// from the configuration), so that it holds no segment back.
func (s *Server) openForward() error {
	keep := map[string]bool{}
	for _, fc := range s.cfg.Forward {
		c, err := fc.forwardConfig()
		if err != nil {
			return err
		}
		c.Logger, c.Registerer = s.log, s.reg
		d, err := forward.New(s.spool, c)
		if err != nil {
			return err
		}
		s.stack.push("forward "+fc.Name, d.Close)
		s.forwarders = append(s.forwarders, d)
		keep[forward.ConsumerName(fc.Name)] = true
	}
	for _, name := range s.spool.ConsumerNames() {
		if !strings.HasPrefix(name, forward.ConsumerName("")) || keep[name] {
			continue
		}
		c, err := s.spool.Consumer(name)
		if err != nil {
			return err
		}
		left := s.spool.Stats().LastSeq - c.Committed()
		if err := s.spool.RemoveConsumer(name); err != nil {
			return fmt.Errorf("remove the cursor of a destination no longer configured: %w", err)
		}
		s.log.Warn("forward: a destination is no longer configured; its cursor is removed", "consumer", name, "records_not_sent", left)
	}
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
	mc.RefuseDelta, mc.DeltaMaxStale = c.RefuseDelta, c.DeltaMaxStale
	if s.overrides != nil {
		mc.SeriesLimit = s.overrides.SeriesLimit
	}
	mc.Logger = s.log
	mc.Registerer = s.reg
	if s.remoteWrite != nil {
		mc.WriteNotified = s.remoteWrite
	}
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
	sc.TailBytes = int64(c.TailSize)
	sc.Registerer = s.reg
	return sc
}

// openLake sets s.lakeBucket, the bucket of an s3:// lake URL (nil for
// the data directory's lake), and s.lakeNode, this node's name in it.
func (s *Server) openLake() error {
	name, prefix, err := ParseLakeURL(s.cfg.Lake.URL)
	if err != nil || name == "" {
		return err
	}
	c := s.cfg.Lake.S3
	b, err := bucket.NewS3(context.Background(), bucket.S3Config{Bucket: name, Prefix: prefix,
		Endpoint: c.Endpoint, Region: c.Region, PathStyle: c.PathStyle})
	if err != nil {
		return fmt.Errorf("open lake %s: %w", s.cfg.Lake.URL, err)
	}
	node := s.cfg.Lake.Node
	if node == "" {
		if node, err = nodeID(s.cfg.DataDir); err != nil {
			return err
		}
	}
	s.lakeBucket, s.lakeNode = b, node
	s.log.Info("lake in an object store", "url", s.cfg.Lake.URL, "node", node)
	return nil
}

// nodeIDFile keeps, in the data directory, the node name made for it.
const nodeIDFile = "node-id"

// nodeID returns the data directory's node name, making one the first
// time: the host's name (what of it is [a-z0-9-]) and 8 random hex
// digits, so that it goes with the spool whose records its files number.
func nodeID(dataDir string) (string, error) {
	path := filepath.Join(dataDir, nodeIDFile)
	if b, err := os.ReadFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		if !lake.ValidNode(id) {
			return "", fmt.Errorf("%s: %q is not a node name (1 to 63 of [a-z0-9-])", path, id)
		}
		return id, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read node id: %w", err)
	}
	host, _ := os.Hostname()
	var b strings.Builder
	for _, r := range strings.ToLower(host) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		}
	}
	base := strings.Trim(b.String(), "-")
	if len(base) > 40 {
		base = base[:40]
	}
	if base == "" {
		base = "node"
	}
	id := fmt.Sprintf("%s-%08x", base, rand.Uint32())
	if err := durable.WriteFile(path, []byte(id+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write node id: %w", err)
	}
	return id, nil
}

// lakeRetention is the lake's retention: lake.retention and
// lake.retention_size, each tenant's own age from the overrides file.
func (s *Server) lakeRetention() lake.Retention {
	r := lake.Retention{MaxAge: s.cfg.Lake.Retention, MaxSize: int64(s.cfg.Lake.RetentionSize)}
	if s.overrides != nil {
		r.TenantMaxAge = s.overrides.LakeRetention
	}
	return r
}

// tenantRetentionEvery is how often the metric store's per-tenant
// retention runs (the lake's runs with its loader's pass, every minute).
const tenantRetentionEvery = time.Minute

// startTenantRetention removes, at start and then every
// tenantRetentionEvery, each tenant's samples older than its
// metrics_retention in the overrides file; without one, nothing.
func (s *Server) startTenantRetention() {
	if s.overrides == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(tenantRetentionEvery)
		defer t.Stop()
		for {
			if n, err := s.metrics.TenantRetention(ctx, s.overrides.MetricsRetention, time.Now()); err != nil {
				s.log.Error("metric store: tenant retention", "err", err)
			} else if n > 0 {
				s.log.Info("metric store: tenants' samples past their retention removed", "tenants", n)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	s.stack.push("tenant retention", func() error {
		cancel()
		<-done
		return nil
	})
}

// dropPending is the rows the delete requests not carried out yet select
// in a file the lake loader writes (lakeload.Config.Drop).
func (s *Server) dropPending(sig otlpwire.Signal, tenantName string, hour time.Time) lake.RowMatcher {
	if s.deletes == nil {
		return nil
	}
	return s.deletes.Drop(sig, tenantName, hour)
}

// rewriteLake carries out the delete requests in the lake loader's pass
// (lakeload.Config.Rewrite).
func (s *Server) rewriteLake(ctx context.Context, p lakeload.RewritePass) error {
	if s.deletes == nil {
		return nil
	}
	return s.deletes.Process(ctx, p)
}
