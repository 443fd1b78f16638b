package serve

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/scrape"
	"github.com/prometheus/prometheus/storage/remote"
	"go.yaml.in/yaml/v3"
)

// RemoteWrite is Prometheus' remote_write list, written as in
// prometheus.yml (url, headers, authorization, basic_auth, oauth2,
// sigv4, azuread, tls_config, proxy_url, queue_config, metadata_config,
// write_relabel_configs, protobuf_message for remote write 2.0, ...),
// checked by Prometheus' own configuration code. The metric store's
// samples are sent on by Prometheus' queue managers, which read the
// TSDB's write-ahead log as a Prometheus server or agent does: sharding,
// retries with backoff and resharding are Prometheus' code.
type RemoteWrite struct {
	configs []*promconfig.RemoteWriteConfig
}

// UnmarshalYAML reads the list with Prometheus' configuration loader.
func (r *RemoteWrite) UnmarshalYAML(n *yaml.Node) error {
	doc := &yaml.Node{Kind: yaml.MappingNode, Content: []*yaml.Node{
		{Kind: yaml.ScalarNode, Value: "remote_write"}, n,
	}}
	b, err := yaml.Marshal(doc)
	if err != nil {
		return fmt.Errorf("line %d: remote_write: %w", n.Line, err)
	}
	return r.add(string(b), fmt.Sprintf("line %d: ", n.Line))
}

// MarshalYAML writes the list as Prometheus does.
func (r RemoteWrite) MarshalYAML() (any, error) { return r.configs, nil }

// AddURL adds a remote write endpoint with Prometheus' defaults.
func (r *RemoteWrite) AddURL(url string) error {
	b, err := yaml.Marshal(map[string]any{"remote_write": []map[string]string{{"url": url}}})
	if err != nil {
		return err
	}
	return r.add(string(b), "")
}

func (r *RemoteWrite) add(doc, where string) error {
	c, err := promconfig.Load(doc, slog.New(slog.DiscardHandler))
	if err != nil {
		return fmt.Errorf("%sremote_write: %w", where, err)
	}
	r.configs = append(r.configs, c.RemoteWriteConfigs...)
	return nil
}

// Len is the number of endpoints.
func (r RemoteWrite) Len() int { return len(r.configs) }

// remoteWriteFlush is how long Close waits for the queues to send what
// they hold (Prometheus' --storage.remote.flush-deadline, 1m there).
const remoteWriteFlush = 10 * time.Second

// openRemoteWrite makes Prometheus' remote storage on the metric store's
// write-ahead log, when remote_write lists endpoints; startRemoteWrite
// starts its queues once the store (and so the WAL directory) is open.
// It is closed after the store, so that its queues flush what the store
// wrote last.
func (s *Server) openRemoteWrite() error {
	if s.cfg.RemoteWrite.Len() == 0 {
		return nil
	}
	dir := filepath.Join(s.cfg.DataDir, "metrics")
	rs := remote.NewStorage(s.log.With("component", "remote_write"), s.reg,
		func() (int64, error) { return 0, nil }, // for remote read, which serve does not configure
		dir, remoteWriteFlush, noScrapeManager{}, false)
	s.stack.push("remote write", rs.Close)
	s.remoteWrite = rs
	return nil
}

// startRemoteWrite starts the remote write queues: each WAL watcher
// sends the samples written from now on (Prometheus' rule: samples older
// than the watcher's start are not sent).
func (s *Server) startRemoteWrite() error {
	if s.remoteWrite == nil {
		return nil
	}
	conf := &promconfig.Config{GlobalConfig: promconfig.DefaultGlobalConfig, RemoteWriteConfigs: s.cfg.RemoteWrite.configs}
	if err := s.remoteWrite.ApplyConfig(conf); err != nil {
		return fmt.Errorf("remote write: %w", err)
	}
	for _, c := range s.cfg.RemoteWrite.configs {
		s.log.Info("remote write", "url", c.URL.Redacted(), "protobuf_message", c.ProtobufMessage)
	}
	return nil
}

// noScrapeManager answers the metadata watcher: serve scrapes nothing,
// so remote write sends no scrape metadata.
type noScrapeManager struct{}

func (noScrapeManager) Get() (*scrape.Manager, error) {
	return nil, errors.New("wirehouse serve does not scrape")
}
