package lakeread_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
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

// TestNeedlesWithAndWithoutGrams: Logs and CountLogs with |= needles,
// and Logs with |~ expressions,
// give the records the needles select among those sent (pdata is the
// oracle), with the files' body index (lake.GramsKey) and without it
// (Config.NoIndexes): rare needles (session keys, in one file of six),
// needles inside a word and across words, frequent ones, needles
// shorter than a gram, absent ones, two at once, for every service and
// for one, over the whole range and part of it.
func TestNeedlesWithAndWithoutGrams(t *testing.T) {
	dir := t.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	for i := range 6 {
		reqs = append(reqs, synth.Logs(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 1, TotalRecords: 6000, Start: base.Add(time.Duration(i) * 20 * time.Minute)}))
	}
	for _, r := range reqs {
		writeLogsLake(t, dir, r) // a file each
	}
	type rec struct {
		svc, line string
		ts        int64
	}
	var recs []rec
	eachSentLog(t, reqs, func(svc string, rl plog.ResourceLogs, sl plog.ScopeLogs, lr plog.LogRecord) {
		ts, _ := logText(rl, sl, lr)
		recs = append(recs, rec{svc, lr.Body().AsString(), ts})
	})
	keys := regexp.MustCompile(`session:([0-9a-f]{8})`)
	var rare []string
	for _, r := range recs {
		if m := keys.FindStringSubmatch(r.line); m != nil && len(rare) < 6 {
			rare = append(rare, m[1])
		}
	}
	svc := recs[len(recs)/2].svc
	needles := [][]string{
		{rare[0]}, {rare[1]}, {rare[2][1:7]}, {"session:" + rare[3]}, {rare[4] + ", fetching"},
		{"exhausted"}, {"deadline exceeded"}, {"ms"}, {"a"}, {"no such text anywhere"}, {"zzzz"},
		{"cache miss", rare[5]}, {"orders/1"}, {"ogged in from 10."},
	}
	ranges := [][2]time.Time{{base.Add(-time.Hour), base.Add(3 * time.Hour)}, {base.Add(30 * time.Minute), base.Add(70 * time.Minute)}}
	// The chunk cache's readers are reused across the queries: none, and
	// one so small that readers are evicted and refused all along.
	readers := map[string]*lakeread.Reader{
		"grams":             newReader(t, dir),
		"no grams":          newReader(t, dir, func(c *lakeread.Config) { c.NoIndexes = true }),
		"no chunk cache":    newReader(t, dir, func(c *lakeread.Config) { c.ChunkCacheBytes = 0 }),
		"small chunk cache": newReader(t, dir, func(c *lakeread.Config) { c.ChunkCacheBytes = 256 << 10 }),
	}
	for _, r := range readers {
		defer r.Close()
	}
	found := 0
	for _, ns := range needles {
		for _, only := range []string{"", svc} {
			for ri, rg := range ranges {
				want := map[string]int{}
				wantCount := map[int64]int64{}
				for _, r := range recs {
					if r.ts < rg[0].UnixNano() || r.ts >= rg[1].UnixNano() || only != "" && r.svc != only {
						continue
					}
					ok := true
					for _, n := range ns {
						ok = ok && strings.Contains(r.line, n)
					}
					if ok {
						want[r.line]++
						wantCount[r.ts/int64(time.Minute)]++
					}
				}
				if len(want) > 0 {
					found++
				}
				var contains [][]byte
				for _, n := range ns {
					contains = append(contains, []byte(n))
				}
				q := lakeread.LogQuery{Start: rg[0], End: rg[1], Contains: contains, Fields: lakeread.FieldLine}
				cq := lakeread.LogCountQuery{Start: rg[0], End: rg[1], Contains: contains, Bucket: func(ts int64) int64 { return ts / int64(time.Minute) }}
				if only != "" {
					q.Service = func(s string) bool { return s == only }
					cq.Service = q.Service
				}
				for name, r := range readers {
					got := map[string]int{}
					if err := r.Logs(context.Background(), "acme", q, func(l *lakeread.LogRecord) bool { got[string(l.Line)]++; return true }); err != nil {
						t.Fatal(err)
					}
					if !maps.Equal(got, want) {
						t.Errorf("%s: needles %q, service %q, range %d: %d lines, want %d", name, ns, only, ri, len(got), len(want))
					}
					gotCount := map[int64]int64{}
					if err := r.CountLogs(context.Background(), "acme", cq, func(c lakeread.LogCount) bool { gotCount[c.Bucket] += c.N; return true }); err != nil {
						t.Fatal(err)
					}
					if !maps.Equal(gotCount, wantCount) {
						t.Errorf("%s: count of needles %q, service %q, range %d: %v, want %v", name, ns, only, ri, gotCount, wantCount)
					}
				}
			}
		}
	}
	// Regular expressions, whose literals the index and a substring test
	// take first.
	for _, expr := range []string{rare[0] + "[,]", "status=5[0-9][0-9]", "(?i)CACHE MISS.*" + rare[1], "ex(haus)ted", "waited [0-9]+ms", "a|zzzz", "nothing ?here[0-9]"} {
		re := regexp.MustCompile(expr)
		want := map[string]int{}
		for _, r := range recs {
			if re.MatchString(r.line) {
				want[r.line]++
			}
		}
		q := lakeread.LogQuery{Start: ranges[0][0], End: ranges[0][1], Matches: []*regexp.Regexp{re}, Fields: lakeread.FieldLine}
		for name, r := range readers {
			got := map[string]int{}
			if err := r.Logs(context.Background(), "acme", q, func(l *lakeread.LogRecord) bool { got[string(l.Line)]++; return true }); err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s: regexp %q: %d lines, want %d", name, expr, len(got), len(want))
			}
		}
	}
	if found < len(needles) {
		t.Errorf("%d of %d queries found lines: the test compares little", found, 4*len(needles))
	}
}

// TestNeedlesDamagedGrams: a file whose body index (a grams region, or
// the footer's value of earlier files) is missing, malformed or does not
// cover its rows is read whole: a needle's lines are those without the
// index.
func TestNeedlesDamagedGrams(t *testing.T) {
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	req := synth.Logs(synth.Config{Seed: 5, Resources: 3, ScopesPerResource: 1, TotalRecords: 5000, Start: base})
	q := lakeread.LogQuery{Start: base.Add(-time.Hour), End: base.Add(time.Hour), Contains: [][]byte{[]byte("session:")}, Fields: lakeread.FieldLine}
	lines := func(r *lakeread.Reader) map[string]int {
		t.Helper()
		got := map[string]int{}
		if err := r.Logs(context.Background(), "acme", q, func(l *lakeread.LogRecord) bool { got[string(l.Line)]++; return true }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	ref := t.TempDir()
	writeLogsLake(t, ref, req)
	want := lines(newReader(t, ref, func(c *lakeread.Config) { c.NoIndexes = true }))
	if len(want) < 10 {
		t.Fatalf("%d lines: the test compares little", len(want))
	}
	// Files as earlier releases wrote them: the index in the footer.
	for name, damage := range map[string]func(string) (string, bool){
		"intact":    func(v string) (string, bool) { return v, true },
		"missing":   func(string) (string, bool) { return "", false },
		"malformed": func(v string) (string, bool) { return v[:len(v)-8] + "AAAAAAAA", true },
		// Every block empty: each a filter that refuses every gram,
		// and one row less, which the reader sees.
		"wrong rows": func(v string) (string, bool) {
			g, err := lake.ParseGrams(v)
			if err != nil {
				t.Fatal(err)
			}
			for i := range g.Entries {
				clear(g.Entries[i].Filter)
			}
			g.Entries[0].Rows++
			return g.Marshal(), true
		},
	} {
		dir := footerIndexLake(t, req, damage)
		if got := lines(newReader(t, dir)); !maps.Equal(got, want) {
			t.Errorf("footer index %s: %d lines, want %d", name, len(got), len(want))
		}
	}
	// Files with a grams region (lake.GramsRegionKey), damaged in
	// place; each read twice by one reader (the second time with the
	// region's table kept), and by a reader with the files open.
	for name, damage := range map[string]func(b []byte, region, table, footer int) []byte{
		"intact":        func(b []byte, _, _, _ int) []byte { return b },
		"filters zero":  func(b []byte, region, table, _ int) []byte { clear(b[region:table]); return b },
		"table byte":    func(b []byte, _, table, _ int) []byte { b[table+3] ^= 1; return b },
		"trailer magic": func(b []byte, _, _, footer int) []byte { b[footer-1] = 'X'; return b },
		"lengths":       func(b []byte, _, _, footer int) []byte { b[footer-17] ^= 0x10; return b },
		"gone":          func(b []byte, region, _, footer int) []byte { return append(b[:region:region], b[footer:]...) },
		// A region that parses, every filter refusing every gram, over
		// one row more than the file holds.
		"wrong rows": func(b []byte, region, _, footer int) []byte {
			g, err := lake.ReadGrams(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			for i := range g.Entries {
				clear(g.Entries[i].Filter)
			}
			g.Entries[0].Rows++
			return slices.Concat(b[:region], lake.MarshalGramsRegion(g), b[footer:])
		},
	} {
		dir := regionDamagedLake(t, req, damage)
		r := newReader(t, dir)
		for try := range 2 {
			if got := lines(r); !maps.Equal(got, want) {
				t.Errorf("grams region %s, query %d: %d lines, want %d", name, try, len(got), len(want))
			}
		}
		if got := lines(newReader(t, dir, func(c *lakeread.Config) { c.Remote = true })); !maps.Equal(got, want) {
			t.Errorf("grams region %s, read whole after the footer: %d lines, want %d", name, len(got), len(want))
		}
	}
}

// footerIndexLake writes req as a lake, each file rewritten as earlier
// releases wrote it: its body index in the footer (lake.GramsKey, the
// value given by damage; none if it returns false), no grams region.
func footerIndexLake(t *testing.T, req []byte, damage func(string) (string, bool)) string {
	t.Helper()
	dir := t.TempDir()
	writeLogsLake(t, dir, req)
	eachParquet(t, dir, func(p string, b []byte) []byte {
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := lake.FileGrams(pf, bytes.NewReader(b), int64(len(b)))
		if !ok {
			t.Fatalf("%s: no body index", p)
		}
		opts := []parquet.WriterOption{pf.Schema()}
		for _, kv := range pf.Metadata().KeyValueMetadata {
			if kv.Key != lake.GramsRegionKey {
				opts = append(opts, parquet.KeyValueMetadata(kv.Key, kv.Value))
			}
		}
		if v, ok := damage(g.Marshal()); ok {
			opts = append(opts, parquet.KeyValueMetadata(lake.GramsKey, v))
		}
		var out bytes.Buffer
		w := parquet.NewGenericWriter[any](&out, opts...)
		for _, rg := range pf.RowGroups() {
			if _, err := w.WriteRowGroup(rg); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		return out.Bytes()
	})
	return dir
}

// regionDamagedLake writes req as a lake, each file's bytes then given to
// damage with where its grams region, the region's table and the file's
// footer start.
func regionDamagedLake(t *testing.T, req []byte, damage func(b []byte, region, table, footer int) []byte) string {
	t.Helper()
	dir := t.TempDir()
	writeLogsLake(t, dir, req)
	eachParquet(t, dir, func(p string, b []byte) []byte {
		footer := len(b) - 8 - int(binary.LittleEndian.Uint32(b[len(b)-8:]))
		tr := b[footer-20 : footer]
		if string(tr[16:]) != "WHG1" {
			t.Fatalf("%s: no grams region before the footer", p)
		}
		table := footer - 20 - int(binary.LittleEndian.Uint32(tr))
		return damage(b, table-int(binary.LittleEndian.Uint64(tr[4:])), table, footer)
	})
	return dir
}

// eachParquet replaces each Parquet file under dir with what fn returns
// for its bytes.
func eachParquet(t *testing.T, dir string, fn func(p string, b []byte) []byte) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		n++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(p, fn(p, b), 0o644)
	})
	if err != nil || n == 0 {
		t.Fatalf("%d files rewritten: %v", n, err)
	}
}

// BenchmarkNeedle: Logs with one |= needle over a lake of 500,000 logs
// (500 requests of 1,000 records over 10 resources, a file each 100
// requests), every field decoded: a rare needle (a session key, one
// line) and a frequent one (a tenth of the lines, the first 1000 kept),
// with the body index and without it (Config.NoIndexes).
func BenchmarkNeedle(b *testing.B) {
	dir := b.TempDir()
	base := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	var reqs [][]byte
	key := ""
	for i := range 500 {
		req := synth.Logs(synth.Config{Seed: int64(i), Resources: 10, ScopesPerResource: 1, TotalRecords: 1000, Start: base.Add(time.Duration(i) * time.Second)})
		if m := regexp.MustCompile(`session:([0-9a-f]{8})`).FindSubmatch(req); i == 250 && m != nil {
			key = string(m[1])
		}
		reqs = append(reqs, req)
	}
	if key == "" {
		b.Fatal("no session key in request 250")
	}
	for i := 0; i < len(reqs); i += 100 {
		writeLogsLake(b, dir, reqs[i:i+100]...)
	}
	// The last reader keeps 2 of the 5 files open: a query reopens files,
	// as one over a range of more files than Config.OpenFiles does (the
	// 10M-log run of compare-log-reads.sh, docs/BENCHMARKS.md).
	for _, v := range []struct {
		index     bool
		cache     int64
		openFiles int
	}{{true, lakeread.DefaultChunkCacheBytes, 0}, {false, lakeread.DefaultChunkCacheBytes, 0}, {true, 0, 0}, {true, lakeread.DefaultChunkCacheBytes, 2}} {
		r := newReader(b, dir, func(c *lakeread.Config) {
			c.NoIndexes, c.ChunkCacheBytes = !v.index, v.cache
			if v.openFiles > 0 {
				c.OpenFiles = v.openFiles
			}
		})
		defer r.Close()
		for _, needle := range []string{key, "exhausted"} {
			name := "rare"
			if needle == "exhausted" {
				name = "frequent"
			}
			if !v.index {
				name += ", no index"
			}
			if v.cache == 0 {
				name += ", no chunk cache"
			}
			if v.openFiles > 0 {
				name += fmt.Sprintf(", %d open files", v.openFiles)
			}
			b.Run(name, func(b *testing.B) {
				q := lakeread.LogQuery{Start: base.Add(-time.Hour), End: base.Add(time.Hour), Contains: [][]byte{[]byte(needle)}, Newest: true}
				for b.Loop() {
					n := 0
					err := r.Logs(context.Background(), "acme", q, func(*lakeread.LogRecord) bool { n++; return n < 1000 })
					if err != nil || n == 0 {
						b.Fatalf("%d lines: %v", n, err)
					}
				}
			})
		}
	}
}
