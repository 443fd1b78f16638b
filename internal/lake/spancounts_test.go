package lake

import (
	"context"
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// wantSpanCounts are file f's span counts worked out from its rows as
// docs/format/lake-parquet.md ("Span counts") describes them: spans by
// service, OTLP kind and status code (from the columns' names), root-ness
// (no parent_span_id) and the minute holding their start.
func wantSpanCounts(t *testing.T, f *lakeFile) map[[5]string]int64 {
	t.Helper()
	kinds := map[string]string{"SPAN_KIND_UNSPECIFIED": "0", "SPAN_KIND_INTERNAL": "1", "SPAN_KIND_SERVER": "2", "SPAN_KIND_CLIENT": "3", "SPAN_KIND_PRODUCER": "4", "SPAN_KIND_CONSUMER": "5"}
	codes := map[string]string{"STATUS_CODE_UNSET": "0", "STATUS_CODE_OK": "1", "STATUS_CODE_ERROR": "2"}
	out := map[[5]string]int64{}
	for _, row := range f.rows {
		text := func(col string) string {
			v, ok := f.value(row, col)
			if !ok || v.IsNull() {
				return ""
			}
			return string(v.ByteArray())
		}
		start, _ := f.value(row, "start_time")
		parent, _ := f.value(row, "parent_span_id")
		root := "false"
		if parent.IsNull() || len(parent.ByteArray()) == 0 {
			root = "true"
		}
		minute := time.Unix(0, start.Int64()).UTC().Truncate(time.Minute).Format(time.RFC3339)
		out[[5]string{text("service_name"), kinds[text("kind")], codes[text("status_code")], root, minute}]++
	}
	return out
}

// gotSpanCounts reads file f's span counts key.
func gotSpanCounts(t *testing.T, f *lakeFile) map[[5]string]int64 {
	t.Helper()
	c, ok := TrustedMeta(f.file, SpanCountsKey, ParseCounts, Counts.Rows)
	if !ok {
		t.Fatalf("%s: no span counts it can trust", f.path)
	}
	out := map[[5]string]int64{}
	for _, e := range c.Entries {
		kind, status, root := SpanCountsFields(e.Number)
		r := "false"
		if root {
			r = "true"
		}
		minute := time.Unix(e.Minute*60, 0).UTC().Format(time.RFC3339)
		out[[5]string{c.Names[e.Service], itoa(kind), itoa(status), r, minute}] += e.N
	}
	return out
}

func itoa(n int32) string { return string(rune('0' + n)) }

// TestSpanCounts: each spans file the writer makes holds its span counts,
// equal to those of its rows; compaction's merged file holds theirs.
func TestSpanCounts(t *testing.T) {
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush, cfg.SchemaVersion = true, 2 // version 1 has no indexes
	w := newTestWriter(t, cfg)
	for i := range 4 {
		start := hour.Add(time.Duration(5+10*i) * time.Minute)
		if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: int64(i), Start: start, Resources: 3, ScopesPerResource: 2, TotalRecords: 400})); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(10*i+1), uint64(10*i+5))); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "traces", "tenant=acme", "date=2030-05-01", "hour=10")
	check := func(files []*lakeFile) {
		t.Helper()
		for _, f := range files {
			want, got := wantSpanCounts(t, f), gotSpanCounts(t, f)
			if len(want) < 10 {
				t.Fatalf("%s: %d keys: the test compares little", f.path, len(want))
			}
			if !maps.Equal(got, want) {
				t.Fatalf("%s: span counts\n got  %v\n want %v", f.path, got, want)
			}
		}
	}
	written := readLake(t, dir)
	if len(written) != 4 {
		t.Fatalf("%d spans files, want 4", len(written))
	}
	check(written)
	c, err := Compact(context.Background(), root, 100, hour.Add(2*time.Hour), CompactOptions{})
	if err != nil || c.Merges != 1 {
		t.Fatalf("Compact = %+v, %v", c, err)
	}
	merged := readLake(t, dir)
	if len(merged) != 1 {
		t.Fatalf("after compaction %d files", len(merged))
	}
	check(merged)
}

// TestSpanMinuteOf: the granule holding a start, floor of minutes, before
// the epoch too; packed numbers unpack.
func TestSpanMinuteOf(t *testing.T) {
	for _, c := range []struct{ ts, want int64 }{{0, 0}, {59_999_999_999, 0}, {60e9, 1}, {-1, -1}, {-60e9, -1}, {-60e9 - 1, -2}} {
		if got := SpanMinuteOf(c.ts); got != c.want {
			t.Errorf("SpanMinuteOf(%d) = %d, want %d", c.ts, got, c.want)
		}
	}
	for kind := int32(-1); kind <= 8; kind++ {
		for status := int32(-1); status <= 4; status++ {
			for _, root := range []bool{false, true} {
				n, ok := SpanCountsNumber(kind, status, root)
				if ok != (kind >= 0 && kind <= 7 && status >= 0 && status <= 3) {
					t.Fatalf("SpanCountsNumber(%d, %d, %v) ok %v", kind, status, root, ok)
				}
				if k, s, r := SpanCountsFields(n); ok && (k != kind || s != status || r != root) {
					t.Fatalf("%d, %d, %v packed to %d, unpacked to %d, %d, %v", kind, status, root, n, k, s, r)
				}
			}
		}
	}
}
