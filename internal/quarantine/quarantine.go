// Package quarantine keeps the requests wirehouse acknowledged but could
// not store, so that nothing acknowledged is lost and nothing one request
// holds can stop a store for good: a dead-letter directory.
//
// Each request is two files under the directory, named by its id:
//
//	<dir>/<signal>/<id>.binpb   the Export*ServiceRequest as received (protobuf)
//	<dir>/<signal>/<id>.json    why: {"signal", "tenant", "source", "id", "received", "records", "bytes", "error"}
//
// Both are written durably (fsync, rename, fsync of the directory), the
// request first, so a description always has its request. An id is
// unique per request within its source (the spool's sequence number for
// the lake loader), so putting the same request again replaces its files
// rather than adding a copy. The .binpb files are what `wirehouse ingest`
// and any OTLP tool read; once the cause is fixed they can be sent again.
// The files' format is docs/format/quarantine.md.
package quarantine

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/durable"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Entry is one request to keep.
type Entry struct {
	Signal   string    // "logs", "traces" or "metrics": the subdirectory
	Tenant   string    // the tenant it was received for; "" for the default
	Source   string    // what could not store it, e.g. "lake" or "metrics"
	ID       string    // unique within Source; [A-Za-z0-9._-], 1 to 128 bytes
	Received time.Time // when it was received, if known
	Records  int       // its records, if known
	Payload  []byte    // the request's protobuf bytes; not retained
	Err      error     // why it could not be stored
}

// Dir is a quarantine directory. It is safe for concurrent use.
type Dir struct {
	path     string
	requests *prometheus.CounterVec
	records  *prometheus.CounterVec
	total    atomic.Int64
}

// Config configures a Dir. It has no defaults but the zero values; Dir
// must be set.
type Config struct {
	// Dir is the directory's path; it is created when the first request
	// is put.
	Dir string
	// Registerer, if not nil, gets the counters
	// wirehouse_quarantined_requests_total and
	// wirehouse_quarantined_records_total, by signal and source.
	Registerer prometheus.Registerer
}

// Validate reports the first field of c that Open would refuse.
func (c Config) Validate() error {
	if c.Dir == "" {
		return errors.New("open quarantine: Dir not set")
	}
	return nil
}

// Open validates cfg and returns the quarantine directory at cfg.Dir,
// creating it when the first request is put.
func Open(cfg Config) (*Dir, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	d := &Dir{
		path: cfg.Dir,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_quarantined_requests_total",
			Help: "Acknowledged requests that could not be stored and were kept in the quarantine directory instead.",
		}, []string{"signal", "source"}),
		records: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_quarantined_records_total",
			Help: "Log records, spans or data points in quarantined requests (as counted when received).",
		}, []string{"signal", "source"}),
	}
	if reg := cfg.Registerer; reg != nil {
		if err := reg.Register(d.requests); err != nil {
			return nil, fmt.Errorf("open quarantine: %w", err)
		}
		if err := reg.Register(d.records); err != nil {
			return nil, fmt.Errorf("open quarantine: %w", err)
		}
	}
	return d, nil
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// Count is the number of requests put since Open.
func (d *Dir) Count() int64 { return d.total.Load() }

// description is the .json file of an entry.
type description struct {
	Signal   string `json:"signal"`
	Tenant   string `json:"tenant,omitempty"`
	Source   string `json:"source"`
	ID       string `json:"id"`
	Received string `json:"received,omitempty"`
	Records  int    `json:"records"`
	Bytes    int    `json:"bytes"`
	Error    string `json:"error"`
}

// Put keeps e durably and counts it; it returns the path of the request
// file. It fails only when the files cannot be written (a full disk):
// then the caller must not consider the request kept.
func (d *Dir) Put(e Entry) (string, error) {
	if !validName(e.Signal) || !validName(e.ID) || !validName(e.Source) {
		return "", fmt.Errorf("quarantine: invalid signal %q, source %q or id %q", e.Signal, e.Source, e.ID)
	}
	dir := filepath.Join(d.path, e.Signal)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	desc := description{Signal: e.Signal, Tenant: e.Tenant, Source: e.Source, ID: e.ID,
		Records: e.Records, Bytes: len(e.Payload), Error: "unknown"}
	if !e.Received.IsZero() {
		desc.Received = e.Received.UTC().Format(time.RFC3339Nano)
	}
	if e.Err != nil {
		desc.Error = e.Err.Error()
	}
	js, err := json.MarshalIndent(desc, "", "  ")
	if err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	req := filepath.Join(dir, e.ID+".binpb")
	if err := durable.WriteFile(req, e.Payload, 0o644); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	if err := durable.WriteFile(filepath.Join(dir, e.ID+".json"), append(js, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("quarantine: %w", err)
	}
	d.requests.WithLabelValues(e.Signal, e.Source).Inc()
	d.records.WithLabelValues(e.Signal, e.Source).Add(float64(e.Records))
	d.total.Add(1)
	return req, nil
}

// validName reports whether s may be one segment of a quarantine path:
// the rule of tenant names (tenant.Valid).
func validName(s string) bool { return tenant.Valid(s) }
