package lakeread_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestCountLogsAsRecords: CountLogs' counts by service, severity and
// bucket (and by service and bucket alone) are those of the records sent
// (pdata is the oracle), with the files' counts (lake.CountsKey) and
// without them (Config.NoIndexes), on a lake where whole pages fall in
// one bucket and hold one service (requests of 20,000 records of one
// resource, read from the page index) and where they do not (three
// resources a request); with buckets of 10 s, 1 min, 5 min and 1 h, each
// as a step grid's end (left-open, as LogQL's windows: the files' counts
// answer whole minutes) and as its start, over ranges that cut minutes
// and requests in two and over ranges of whole minutes, for every
// service and for one.
func TestCountLogsAsRecords(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for i := range 8 {
		resources, n := 1, 20_000
		if i >= 6 {
			resources, n = 3, 6_000
		}
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(i), Resources: resources, ScopesPerResource: 1, TotalRecords: n, Start: base.Add(time.Duration(i) * 50 * time.Second)}))
	}
	writeLogsLake(t, dir, reqs...)
	readers := map[string]*lakeread.Reader{
		"counts":    newReader(t, dir),
		"no counts": newReader(t, dir, func(c *lakeread.Config) { c.NoIndexes = true }),
	}
	for _, r := range readers {
		defer r.Close()
	}
	type key struct {
		svc, text string
		num       int32
		bucket    int64
	}
	// records are the records sent: service, severity and time.
	type record struct {
		svc, text string
		num       int32
		ts        int64
		line      string
	}
	var records []record
	services := map[string]bool{}
	eachSentLog(t, reqs, func(svc string, _ plog.ResourceLogs, _ plog.ScopeLogs, lr plog.LogRecord) {
		services[svc] = true
		ts := int64(lr.Timestamp())
		if ts == 0 {
			ts = int64(lr.ObservedTimestamp())
		}
		records = append(records, record{svc, lr.SeverityText(), int32(lr.SeverityNumber()), ts, lr.Body().AsString()})
	})
	// A word some lines hold, for counts of the lines holding it (read
	// from the files' bodies, the counts' minutes bounding their times).
	word := strings.Fields(records[len(records)/2].line)[0]
	if len(services) < 3 {
		t.Fatalf("%d services: the test compares little", len(services))
	}
	one := slices.Sorted(maps.Keys(services))[1]
	ranges := [][2]time.Time{
		{base.Add(20 * time.Second), base.Add(6*time.Minute + 30*time.Second)},                   // cuts minutes
		{base.Add(time.Nanosecond), base.Add(6*time.Minute + time.Nanosecond)},                   // whole minutes (t-1m, t]
		{base.Add(-time.Hour), base.Add(time.Hour)},                                              // every record
		{base.Add(2*time.Minute + time.Nanosecond), base.Add(2*time.Minute + 2*time.Nanosecond)}, // one nanosecond
	}
	fromCounts, fallbacks := 0, 0
	defer func() {
		if fromCounts == 0 || fallbacks == 0 {
			t.Errorf("bytes: %d answered from the counts, %d refused: both ways not tested", fromCounts, fallbacks)
		}
	}()
	for _, step := range []time.Duration{10 * time.Second, time.Minute, 5 * time.Minute, time.Hour} {
		buckets := map[string]func(int64) int64{
			"start": func(ts int64) int64 { return ts / int64(step) },
			"end": func(ts int64) int64 { // ceil, as eval's step grid
				k := ts / int64(step)
				if ts%int64(step) != 0 {
					k++
				}
				return k
			},
		}
		for bname, bucket := range buckets {
			for ri, rg := range ranges {
				for _, only := range []string{"", one} {
					for _, needle := range []string{"", word} {
						for _, severity := range []bool{true, false} {
							start, end := rg[0], rg[1]
							want, wantBytes := map[key]int64{}, map[key]int64{}
							for _, rec := range records {
								if rec.ts < start.UnixNano() || rec.ts >= end.UnixNano() || only != "" && rec.svc != only || !strings.Contains(rec.line, needle) {
									continue
								}
								k := key{svc: rec.svc, bucket: bucket(rec.ts)}
								if severity {
									k.text, k.num = rec.text, rec.num
								}
								want[k]++
								wantBytes[k] += int64(len(rec.line))
							}
							q := lakeread.LogCountQuery{Start: start, End: end, Bucket: bucket, Severity: severity}
							if only != "" {
								q.Service = func(s string) bool { return s == only }
							}
							if needle != "" {
								q.Contains = [][]byte{[]byte(needle)}
							}
							for rname, r := range readers {
								got := map[key]int64{}
								err := r.CountLogs(context.Background(), "acme", q, func(c lakeread.LogCount) bool {
									got[key{c.Service, c.SeverityText, c.SeverityNumber, c.Bucket}] += c.N
									return true
								})
								if err != nil {
									t.Fatal(err)
								}
								if !maps.Equal(got, want) {
									t.Errorf("%s: step %v, bucket %s, range %d, service %q, needle %q, severity %v: %d counts, want %d\n got  %v\n want %v",
										rname, step, bname, ri, only, needle, severity, len(got), len(want), sorted(got), sorted(want))
								}
								if needle != "" {
									continue
								}
								// The lines' bytes, from the counts alone: whole
								// minutes in whole buckets, or ErrNoByteCounts.
								qb := q
								qb.Bytes = true
								gotB := map[key]int64{}
								err = r.CountLogs(context.Background(), "acme", qb, func(c lakeread.LogCount) bool {
									gotB[key{c.Service, c.SeverityText, c.SeverityNumber, c.Bucket}] += c.Bytes
									return true
								})
								// Minutes (t-1m, t] lie whole in buckets of
								// whole minutes that end at their ends.
								whole := rname == "counts" && (ri == 1 || ri == 2) && step >= time.Minute && bname == "end"
								switch {
								case errors.Is(err, lakeread.ErrNoByteCounts) && !whole:
									fallbacks++
								case err != nil:
									t.Fatalf("%s: step %v, bucket %s, range %d: bytes: %v", rname, step, bname, ri, err)
								case !maps.Equal(gotB, wantBytes):
									t.Errorf("%s: step %v, bucket %s, range %d, service %q, severity %v: bytes\n got  %v\n want %v",
										rname, step, bname, ri, only, severity, sorted(gotB), sorted(wantBytes))
								default:
									fromCounts++
								}
							}
							if ri < 3 && only == "" && severity && len(want) < 3 {
								t.Errorf("step %v, range %d: %d counts: the test compares little", step, ri, len(want))
							}
						}
					}
				}
			}
		}
	}
}

// BenchmarkCountLogs: a count by service and by service and severity, 1
// min buckets (a step grid's ends, as eval's), over a lake of 500,000
// logs (500 requests of 1,000 records over 10 resources, a request a
// second, in five files), with the files' counts and without them
// (Config.NoIndexes). -cpu 1,2 shows what reading files in parallel
// gives.
func BenchmarkCountLogs(b *testing.B) {
	dir := b.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for i := range 500 {
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 1, TotalRecords: 1000, Start: base}))
	}
	for i := 0; i < len(reqs); i += 100 {
		writeLogsLake(b, dir, reqs[i:i+100]...) // five files, read in parallel
	}
	for _, index := range []bool{true, false} {
		r := newReader(b, dir, func(c *lakeread.Config) { c.NoIndexes = !index })
		defer r.Close()
		for _, severity := range []bool{false, true} {
			name := "by service"
			if severity {
				name += " and severity"
			}
			if !index {
				name += ", no counts"
			}
			b.Run(name, func(b *testing.B) {
				q := lakeread.LogCountQuery{Start: base.Add(-24*time.Hour + 1), End: base.Add(24*time.Hour + 1), Severity: severity,
					Bucket: func(ts int64) int64 { return (ts + int64(time.Minute) - 1) / int64(time.Minute) }}
				for b.Loop() {
					n := int64(0)
					err := r.CountLogs(context.Background(), "acme", q, func(c lakeread.LogCount) bool { n += c.N; return true })
					if err != nil || n != 500_000 {
						b.Fatalf("%d records counted, want 500000: %v", n, err)
					}
				}
			})
		}
	}
}

// sorted is a map's entries as sorted text.
func sorted[K comparable, V any](m map[K]V) []string {
	var out []string
	for k, v := range m {
		out = append(out, fmt.Sprint(k, "=", v))
	}
	slices.Sort(out)
	return out
}

// TestCountLogsDamagedCounts: a file whose counts are missing, malformed
// or do not hold its rows is counted from its columns: the answer is the
// one without counts.
func TestCountLogsDamagedCounts(t *testing.T) {
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	req := synth.Logs(synth.Config{Seed: 3, Resources: 3, ScopesPerResource: 1, TotalRecords: 5000, Start: base})
	q := lakeread.LogCountQuery{Start: base.Add(-time.Hour + 1), End: base.Add(time.Hour + 1), Severity: true,
		Bucket: func(ts int64) int64 { return (ts + int64(time.Minute) - 1) / int64(time.Minute) }}
	count := func(r *lakeread.Reader) map[lakeread.LogCount]bool {
		t.Helper()
		got := map[lakeread.LogCount]bool{}
		if err := r.CountLogs(context.Background(), "acme", q, func(c lakeread.LogCount) bool { got[c] = true; return true }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	ref := t.TempDir()
	writeLogsLake(t, ref, req)
	want := count(newReader(t, ref, func(c *lakeread.Config) { c.NoIndexes = true }))
	if len(want) < 10 {
		t.Fatalf("%d counts: the test compares little", len(want))
	}
	// A sum off by one: the entries' counts doubled but one.
	doubled := func(v string) string {
		c, err := lake.ParseCounts(v)
		if err != nil {
			t.Fatal(err)
		}
		for i := range c.Entries {
			c.Entries[i].N *= 2
		}
		c.Entries[0].N--
		return c.Marshal()
	}
	for name, damage := range map[string]func(string) (string, bool){
		"missing":   func(string) (string, bool) { return "", false },
		"malformed": func(v string) (string, bool) { return v[:len(v)/2], true },
		"wrong sum": func(v string) (string, bool) { return doubled(v), true },
	} {
		dir := damagedLake(t, req, lake.CountsKey, damage)
		if got := count(newReader(t, dir)); !maps.Equal(got, want) {
			t.Errorf("%s counts: %d counts, want %d", name, len(got), len(want))
		}
	}
}

// damagedLake writes req to a lake and rewrites each of its files with
// its value of key replaced by damage's (none if it returns false).
func damagedLake(t *testing.T, req []byte, key string, damage func(string) (string, bool)) string {
	t.Helper()
	dir := t.TempDir()
	writeLogsLake(t, dir, req)
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		n++
		return rewriteMeta(p, key, damage)
	})
	if err != nil || n == 0 {
		t.Fatalf("%d files rewritten: %v", n, err)
	}
	return dir
}

// rewriteMeta rewrites the Parquet file at p with the same rows and
// metadata but its value of key replaced by damage's (none if it returns
// false).
func rewriteMeta(p, key string, damage func(string) (string, bool)) error {
	b, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return err
	}
	opts := []parquet.WriterOption{pf.Schema()}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		v := kv.Value
		if kv.Key == key {
			var ok bool
			if v, ok = damage(v); !ok {
				continue
			}
		}
		opts = append(opts, parquet.KeyValueMetadata(kv.Key, v))
	}
	var out bytes.Buffer
	w := parquet.NewGenericWriter[any](&out, opts...)
	for _, rg := range pf.RowGroups() {
		if _, err := w.WriteRowGroup(rg); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	return os.WriteFile(p, out.Bytes(), 0o644)
}
