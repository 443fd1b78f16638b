package lakeread_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzTraceFile: a damaged lake file (any bytes in place of a file the
// writer wrote, of schema version 2 or 1) makes Trace, FindTraces and
// Services fail or find nothing, never panic or hang, and whatever Trace
// returns encodes.
func FuzzTraceFile(f *testing.F) {
	body := synth.Traces(synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 20})
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		f.Fatal(err)
	}
	id := req.Traces().ResourceSpans().At(0).ScopeSpans().At(0).Spans().At(0).TraceID()
	seedDir := f.TempDir()
	writeLake(f, seedDir, body)
	seed, rel := onlyFile(f, seedDir, "traces")
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	// A file of schema version 1 under the same name: its own decoder.
	v1Dir := f.TempDir()
	writeLakeV1(f, v1Dir, body)
	v1Seed, _ := onlyFile(f, v1Dir, "traces")
	f.Add(v1Seed)
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := newReader(t, dir)
		defer r.Close()
		res, err := r.Trace(context.Background(), "acme", id, time.Time{}, time.Time{})
		if err == nil {
			if _, err := res.Spans.AppendProto(nil); err != nil {
				t.Logf("encode: %v", err) // a damaged value is an error, not a panic
			}
		}
		// Search and names read the same file their own ways.
		r.FindTraces(context.Background(), "acme", lakeread.Query{Attributes: map[string]string{"http.route": "/"}}) //nolint:errcheck
		r.Services(context.Background(), "acme", time.Time{}, time.Time{})                                           //nolint:errcheck
		// Tag values of every scope, and span points from columns, from
		// the span counts and the newest alone.
		for _, sc := range lakeread.TagScopes {
			r.TraceTagValues(context.Background(), "acme", sc, "http.route", time.Time{}, time.Time{}, 100) //nolint:errcheck
		}
		for _, counted := range []bool{false, true} {
			f := lakeread.SpanFilter{Kind: -1, Status: -1, Counted: counted, Need: lakeread.NeedService | lakeread.NeedKind | lakeread.NeedStatus}
			r.SpanPoints(context.Background(), "acme", f, func([]lakeread.SpanPoint) error { return nil }) //nolint:errcheck
		}
		f := lakeread.SpanFilter{Kind: -1, Status: -1, Need: lakeread.NeedEnd | lakeread.NeedTraceID}
		r.NewestSpanPoints(context.Background(), "acme", f, 1, func([]lakeread.SpanPoint) error { return nil }) //nolint:errcheck
	})
}

// FuzzLogFile: a damaged logs file (its columns, or its counts and body
// index) makes Logs, CountLogs and LogStreams fail or find nothing,
// never panic or hang.
func FuzzLogFile(f *testing.F) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	body := synth.Logs(synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 20, Start: start})
	seedDir := f.TempDir()
	cfg := lake.DefaultWriterConfig()
	cfg.Dir = seedDir
	w, err := lake.NewWriter(cfg)
	if err != nil {
		f.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalLogs, "acme", body); err != nil {
		f.Fatal(err)
	}
	if err := w.Close(); err != nil {
		f.Fatal(err)
	}
	seed, rel := onlyFile(f, seedDir, "logs")
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	f.Fuzz(func(t *testing.T, b []byte) {
		dir := t.TempDir()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r := newReader(t, dir)
		defer r.Close()
		for _, q := range []lakeread.LogQuery{
			{Start: start.Add(-time.Hour), End: start.Add(time.Hour), Newest: true},
			{Start: start.Add(-time.Hour), End: start.Add(time.Hour), Contains: [][]byte{[]byte("a")}, Service: func(string) bool { return true }, Fields: lakeread.FieldSeverity},
			// Needles and a regular expression the body index serves.
			{Start: start.Add(-time.Hour), End: start.Add(time.Hour), Contains: [][]byte{[]byte("session")}, Oldest: true},
			{Start: start.Add(-time.Hour), End: start.Add(time.Hour), Matches: []*regexp.Regexp{regexp.MustCompile(`status=5[0-9]+`)}},
			// Attribute values under their labels (the resources' keys
			// read from their dictionaries), a service selector, a limit.
			{Start: start.Add(-time.Hour), End: start.Add(time.Hour), AttrValues: []string{"checkout", "a"}, AttrNames: []string{"service_name", "k"},
				AttrLabel: func(k string) string { return strings.ReplaceAll(k, ".", "_") }, Service: func(s string) bool { return s != "x" }, Newest: true, Limit: 3},
		} {
			r.Logs(context.Background(), "acme", q, func(*lakeread.LogRecord) bool { return true }) //nolint:errcheck
		}
		// Counts from the file's counts (a grid on whole minutes) and
		// with a needle.
		minute := func(ts int64) int64 { return (ts + int64(time.Minute) - 1) / int64(time.Minute) }
		for _, c := range [][][]byte{nil, {[]byte("session")}} {
			q := lakeread.LogCountQuery{Start: start.Add(-time.Hour + 1), End: start.Add(time.Hour + 1), Contains: c, Bucket: minute, Severity: true}
			r.CountLogs(context.Background(), "acme", q, func(lakeread.LogCount) bool { return true }) //nolint:errcheck
		}
		r.LogStreams(context.Background(), "acme", start.Add(-time.Hour), start.Add(time.Hour)) //nolint:errcheck
	})
}

// onlyFile returns the one Parquet file of signal sig in the lake under
// dir, and its path relative to dir.
func onlyFile(f *testing.F, dir, sig string) (content []byte, rel string) {
	f.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, sig, "*", "*", "*", "*.parquet"))
	if len(paths) != 1 {
		f.Fatalf("%d seed files", len(paths))
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		f.Fatal(err)
	}
	rel, _ = filepath.Rel(dir, paths[0])
	return b, rel
}
