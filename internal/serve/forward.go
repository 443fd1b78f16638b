package serve

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/forward"
	"github.com/wirehouse/wirehouse/internal/tlsfiles"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// StoreConfig says which signals this node stores itself (store: in the
// YAML). A gateway that only forwards turns all three off.
type StoreConfig struct {
	Logs    bool `yaml:"logs"`    // in the lake
	Traces  bool `yaml:"traces"`  // in the lake
	Metrics bool `yaml:"metrics"` // in the metric store
}

// ForwardConfig is one downstream destination (an entry of forward: in
// the YAML): a set of OTLP endpoints the signals it names are sent to,
// sharded over them on a consistent-hash ring, from the spool, with its
// own cursor.
type ForwardConfig struct {
	Name     string   `yaml:"name"`
	Signals  []string `yaml:"signals"`  // logs, traces, metrics; default all three
	Protocol string   `yaml:"protocol"` // grpc (default) or http
	// Endpoints are host:port (gRPC), or host:port or a base URL such as
	// https://otlp.example:4318 (HTTP; the signal's /v1/... is appended).
	Endpoints []string `yaml:"endpoints"`
	// DNS, in place of Endpoints, finds them by name and looks again
	// every Interval (default 30s).
	DNS struct {
		Host     string        `yaml:"host"`
		Port     int           `yaml:"port"`
		SRV      bool          `yaml:"srv"` // host is an SRV name; records give targets and ports
		Interval time.Duration `yaml:"interval"`
	} `yaml:"dns"`
	// RoutingKey is each signal's shard key: logs and metrics by
	// "resource" (default) or "service", traces by "traceID" (default),
	// "resource" or "service".
	RoutingKey struct {
		Logs    string `yaml:"logs"`
		Metrics string `yaml:"metrics"`
		Traces  string `yaml:"traces"`
	} `yaml:"routing_key"`
	TLS struct {
		Enabled            bool   `yaml:"enabled"`
		CAFile             string `yaml:"ca_file"`              // verifies the endpoints, in place of the system's roots
		CertFile           string `yaml:"cert_file"`            // a client certificate, for mutual TLS
		KeyFile            string `yaml:"key_file"`             // its key
		ServerName         string `yaml:"server_name"`          // the name verified, if not the endpoint's host
		InsecureSkipVerify bool   `yaml:"insecure_skip_verify"` // no verification (tests only)
	} `yaml:"tls"`
	Headers      map[string]string `yaml:"headers"`       // sent with every request: authorization: "Bearer ${env:TOKEN}"
	TenantHeader string            `yaml:"tenant_header"` // sends each record's tenant in this header (X-Scope-OrgID)
	Compression  string            `yaml:"compression"`   // none (default), gzip or zstd
	Timeout      time.Duration     `yaml:"timeout"`       // one attempt; default 10s
	Retry        struct {
		InitialInterval time.Duration `yaml:"initial_interval"` // default 250ms
		MaxInterval     time.Duration `yaml:"max_interval"`     // default 30s
	} `yaml:"retry"`
	MaxBatchSize ByteSize `yaml:"max_batch_size"` // default 1MiB
	Workers      int      `yaml:"workers"`        // requests in flight per endpoint; default 4
}

// forwardConfig turns fc into the forward package's Config, without the
// logger and registry.
func (fc ForwardConfig) forwardConfig() (forward.Config, error) {
	c := forward.Config{
		Name: fc.Name, Protocol: fc.Protocol, Headers: fc.Headers, TenantHeader: fc.TenantHeader,
		Compression: fc.Compression, Timeout: fc.Timeout, RetryInitial: fc.Retry.InitialInterval,
		RetryMax: fc.Retry.MaxInterval, MaxBatchBytes: int(fc.MaxBatchSize), Workers: fc.Workers,
		ResolveEvery: fc.DNS.Interval,
	}
	for _, s := range fc.Signals {
		sig, err := otlpwire.ParseSignal(s)
		if err != nil {
			return c, fmt.Errorf("forward %s: %w", fc.Name, err)
		}
		c.Signals = append(c.Signals, sig)
	}
	switch {
	case len(fc.Endpoints) > 0 && fc.DNS.Host != "":
		return c, fmt.Errorf("forward %s: endpoints and dns exclude each other", fc.Name)
	case len(fc.Endpoints) > 0:
		c.Resolver = forward.Static(fc.Endpoints)
	case fc.DNS.Host != "":
		c.Resolver = forward.DNS{Host: fc.DNS.Host, Port: fc.DNS.Port, SRV: fc.DNS.SRV}
	}
	for _, k := range []struct {
		s   string
		dst *otlpwire.RouteKey
	}{{fc.RoutingKey.Logs, &c.RouteLogs}, {fc.RoutingKey.Metrics, &c.RouteMetrics}, {fc.RoutingKey.Traces, &c.RouteTraces}} {
		if k.s == "" {
			continue
		}
		key, err := otlpwire.ParseRouteKey(k.s)
		if err != nil {
			return c, fmt.Errorf("forward %s: %w", fc.Name, err)
		}
		*k.dst = key
	}
	if fc.TLS.Enabled {
		tc, err := tlsfiles.Client{CAFile: fc.TLS.CAFile, CertFile: fc.TLS.CertFile, KeyFile: fc.TLS.KeyFile,
			ServerName: fc.TLS.ServerName, InsecureSkipVerify: fc.TLS.InsecureSkipVerify}.Config()
		if err != nil {
			return c, fmt.Errorf("forward %s: %w", fc.Name, err)
		}
		c.TLS = tc
	}
	return c, c.Validate()
}

// validateForward checks the destinations and the store settings
// together.
func (c Config) validateForward() error {
	names := map[string]bool{}
	for _, fc := range c.Forward {
		if names[fc.Name] {
			return fmt.Errorf("forward: two destinations named %q", fc.Name)
		}
		names[fc.Name] = true
		fcfg := fc
		if fc.TLS.Enabled {
			fcfg.TLS.Enabled = false // files are read by New, not by Validate
		}
		if _, err := fcfg.forwardConfig(); err != nil {
			return err
		}
	}
	if c.RemoteWrite.Len() > 0 && !c.Store.Metrics {
		return errors.New("remote_write sends what the metric store writes: it needs store.metrics")
	}
	if !c.Store.Logs && !c.Store.Traces && !c.Store.Metrics && len(c.Forward) == 0 {
		return errors.New("store: nothing is stored and nothing forwarded: every request would be dropped")
	}
	return nil
}

// forwarded reports whether some destination takes sig.
func (c Config) forwarded(sig otlpwire.Signal) bool {
	for _, fc := range c.Forward {
		if len(fc.Signals) == 0 {
			return true
		}
		for _, s := range fc.Signals {
			if strings.EqualFold(s, sig.String()) {
				return true
			}
		}
	}
	return false
}
