package lake

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// rowTexts renders every row of files as "column=value" pairs of its
// non-null cells, sorted, so rows compare across files whatever their
// schemas.
func rowTexts(files []*lakeFile) []string {
	var out []string
	for _, f := range files {
		for _, row := range f.rows {
			var cells []string
			for _, v := range row {
				if !v.IsNull() {
					cells = append(cells, f.names[v.Column()]+"="+cellText(v))
				}
			}
			slices.Sort(cells)
			out = append(out, strings.Join(cells, " "))
		}
	}
	slices.Sort(out)
	return out
}

// logsWithAttr is one log at ts whose attribute key holds v.
func logsWithAttr(t *testing.T, ts time.Time, key string, v any) []byte {
	t.Helper()
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "odd")
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(ts))
	if err := lr.Attributes().PutEmpty(key).FromRaw(v); err != nil {
		t.Fatal(err)
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCompact: the loader's files of a closed hour become one file with
// every row of every input, sorted, with the inputs' encodings and a
// column union; an interrupted compaction's inputs are removed the next
// time; uncommitted records, other files and files that disagree on a
// column are left alone.
func TestCompact(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	flush := func(first, last uint64) {
		t.Helper()
		if err := w.FlushAs(RangeName(first, last)); err != nil {
			t.Fatal(err)
		}
	}
	// Five loader writes of logs and spans from varied senders, each
	// with its own set of attribute columns.
	for i := range 5 {
		start := hour.Add(time.Duration(5+7*i) * time.Minute) // synth spreads records around Start
		if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: int64(i), Start: start, Resources: 3, ScopesPerResource: 2, TotalRecords: 120})); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: int64(i), Start: start, Resources: 2, ScopesPerResource: 1, TotalRecords: 40})); err != nil {
			t.Fatal(err)
		}
		flush(uint64(10*i+1), uint64(10*i+5))
	}
	// A sixth write, not yet committed, and a file wirehouse ingest wrote.
	if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: 9, Start: hour.Add(50 * time.Minute), Resources: 1, ScopesPerResource: 1, TotalRecords: 10})); err != nil {
		t.Fatal(err)
	}
	flush(51, 52)
	if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: 8, Start: hour.Add(55 * time.Minute), Resources: 1, ScopesPerResource: 1, TotalRecords: 10})); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	logsDir := filepath.Join(root, "logs", "tenant=acme", "date=2030-05-01", "hour=10")
	tracesDir := filepath.Join(root, "traces", "tenant=acme", "date=2030-05-01", "hour=10")
	before := map[string][]string{logsDir: rowTexts(readLake(t, logsDir)), tracesDir: rowTexts(readLake(t, tracesDir))}

	// Not yet: the hour has not been over for long enough.
	c, err := Compact(context.Background(), root, 50, hour.Add(time.Hour+time.Minute), CompactOptions{})
	if err != nil || c.Merges != 0 {
		t.Fatalf("Compact of an open hour = %+v, %v", c, err)
	}
	c, err = Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Merges != 2 || c.Inputs != 10 || c.Rows != 5*120+5*40 || len(c.Skipped) != 0 {
		t.Fatalf("Compact = %+v, want logs and traces each merged from 5 files", c)
	}
	for dir, timeCol := range map[string]string{logsDir: "timestamp", tracesDir: "start_time"} {
		var merged *lakeFile
		var names []string
		files := readLake(t, dir)
		for _, f := range files {
			names = append(names, filepath.Base(f.path))
			if filepath.Base(f.path) == RangeName(1, 45)+"-c.parquet" {
				merged = f
			}
		}
		if merged == nil {
			t.Fatalf("%s: files %v, want %s.parquet", dir, names, RangeName(1, 45))
		}
		if got := rowTexts(files); !slices.Equal(got, before[dir]) {
			t.Fatalf("%s: rows changed by compaction:\n%s", dir, diffLines(got, before[dir]))
		}
		checkSorted(t, merged, timeCol)
		var lo, hi int64
		for i, row := range merged.rows {
			v, _ := merged.value(row, timeCol)
			if i == 0 || v.Int64() < lo {
				lo = v.Int64()
			}
			hi = max(hi, v.Int64())
		}
		checkEncoding(t, merged, timeCol, lo, hi)
		for name, m := range merged.columns {
			if _, ok := merged.file.Schema().Lookup(name); !ok {
				t.Errorf("%s: wirehouse.columns names %s (%+v), not in the schema", dir, name, m)
			}
		}
		if python := os.Getenv("WIREHOUSE_PYTHON"); python != "" {
			// DuckDB and pyarrow read the merged file as they read the
			// loader's: every row, the same count of distinct trace ids.
			script := `import sys, duckdb, pyarrow.parquet as pq
p = sys.argv[1]
n, ids = duckdb.connect().execute(f"SELECT count(*), count(DISTINCT trace_id) FROM read_parquet('{p}')").fetchone()
print(n, ids, pq.read_table(p).num_rows)`
			out, err := exec.Command(python, "-c", script, merged.path).CombinedOutput()
			ids := map[string]bool{}
			for _, row := range merged.rows {
				if v, ok := merged.value(row, "trace_id"); ok && !v.IsNull() {
					ids[string(v.ByteArray())] = true
				}
			}
			if want := fmt.Sprintf("%d %d %d\n", len(merged.rows), len(ids), len(merged.rows)); err != nil || string(out) != want {
				t.Errorf("%s: duckdb and pyarrow read %q (%v), want %q", dir, out, err, want)
			}
		}
	}
	if names := dirNames(t, logsDir); len(names) != 3 { // merged, uncommitted 51-52, ingest's
		t.Errorf("logs partition after compaction: %v", names)
	}

	// An interrupted compaction: its intent names the output, in place,
	// and inputs of which one was not removed yet. The next pass removes
	// it, whatever its name or content; a file the intent does not name
	// stays, even one whose range lies inside the output's (a spool that
	// lost its tail reuses sequence numbers).
	merged := filepath.Join(logsDir, RangeName(1, 45)+"-c.parquet")
	b, err := os.ReadFile(merged)
	if err != nil {
		t.Fatal(err)
	}
	leftover := RangeName(11, 15) + ".parquet"
	if err := os.WriteFile(filepath.Join(logsDir, leftover), b[:len(b)/2], 0o644); err != nil { // its content does not matter
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logsDir, intentFile), fmt.Appendf(nil, `{"output":%q,"inputs":[%q,%q]}`,
		filepath.Base(merged), RangeName(1, 5)+".parquet", leftover), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{RecoverOnly: true})
	if err != nil || c.Leftover != 1 || c.Merges != 0 {
		t.Fatalf("Compact after an interrupted one = %+v, %v", c, err)
	}
	if got := rowTexts(readLake(t, logsDir)); !slices.Equal(got, before[logsDir]) {
		t.Fatalf("rows changed by the leftover removal:\n%s", diffLines(got, before[logsDir]))
	}
	if _, err := os.Stat(filepath.Join(logsDir, intentFile)); !os.IsNotExist(err) {
		t.Errorf("intent left: %v", err)
	}
	// An intent whose output never made it: nothing is removed.
	if err := os.WriteFile(filepath.Join(logsDir, intentFile), fmt.Appendf(nil, `{"output":%q,"inputs":[%q]}`,
		RangeName(1, 99)+"-c.parquet", filepath.Base(merged)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{RecoverOnly: true}); err != nil || c.Leftover != 0 {
		t.Fatalf("Compact with an unfinished intent = %+v, %v", c, err)
	}
	if _, err := os.Stat(merged); err != nil {
		t.Fatalf("an intent whose output is missing removed an input: %v", err)
	}

	// A damaged intent whose names are not a merge's: nothing outside its
	// range files is touched, though its output exists.
	keep := filepath.Join(logsDir, "notes.txt")
	if err := os.WriteFile(keep, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logsDir, intentFile), fmt.Appendf(nil, `{"output":%q,"inputs":["notes.txt","..",".","","../`+filepath.Base(logsDir)+`/notes.txt"]}`,
		filepath.Base(merged)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, err := Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{RecoverOnly: true}); err != nil || c.Leftover != 0 {
		t.Fatalf("Compact with a damaged intent = %+v, %v", c, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("a damaged intent removed a file it does not own: %v", err)
	}
	if err := os.Remove(keep); err != nil {
		t.Fatal(err)
	}

	// Once committed, the late write joins the merged file.
	c, err = Compact(context.Background(), root, 52, hour.Add(2*time.Hour), CompactOptions{MinFiles: 2})
	if err != nil || c.Merges != 1 || c.Inputs != 2 {
		t.Fatalf("Compact of the committed late write = %+v, %v", c, err)
	}
	if _, err := os.Stat(filepath.Join(logsDir, RangeName(1, 52)+"-c.parquet")); err != nil {
		t.Fatal(err)
	}
	if got := rowTexts(readLake(t, logsDir)); !slices.Equal(got, before[logsDir]) {
		t.Fatalf("rows changed:\n%s", diffLines(got, before[logsDir]))
	}
}

// TestCompactDisagreeing: files whose same-named column holds another type
// are not merged, and stay as they are.
func TestCompactDisagreeing(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	ts := time.Date(2030, 5, 1, 10, 30, 0, 0, time.UTC)
	for i, v := range []any{int64(1), "one", int64(2), "two"} {
		if _, err := w.Append(otlpwire.SignalLogs, "t", logsWithAttr(t, ts.Add(time.Duration(i)*time.Second), "x", v)); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(i+1), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "logs", "tenant=t", "date=2030-05-01", "hour=10")
	before := dirNames(t, dir)
	c, err := Compact(context.Background(), root, 10, ts.Add(2*time.Hour), CompactOptions{})
	if err != nil || c.Merges != 0 || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], "attr_x") {
		t.Fatalf("Compact = %+v, %v; want the partition skipped over attr_x", c, err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, before) {
		t.Errorf("files changed: %v, were %v", got, before)
	}
}

func dirNames(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// BenchmarkCompact merges 60 loader files of 5,000 seed-shaped logs each
// (300,000 rows, 20 MB: a busy hour of one-minute writes) in runs of at
// most maxrun bytes. rows/s counts the rows merged; peakheapMB is the
// largest heap in use during a merge above the heap before it, sampled
// every 2 ms.
func BenchmarkCompact(b *testing.B) {
	template := b.TempDir()
	cfg := testConfig(template)
	cfg.ManualFlush = true
	w, err := NewWriter(cfg)
	if err != nil {
		b.Fatal(err)
	}
	w.cfg.noSync = true
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	const files, perFile = 60, 5000
	for i := range files {
		body := synth.SeedLogs(synth.Config{Seed: int64(i), Start: hour.Add(time.Duration(i/2+1) * time.Minute), Resources: 4, ScopesPerResource: 2, TotalRecords: perFile})
		if _, err := w.Append(otlpwire.SignalLogs, "t", body); err != nil {
			b.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(i+1), uint64(i+1))); err != nil {
			b.Fatal(err)
		}
	}
	part := filepath.Join("logs", "tenant=t", "date=2030-05-01", "hour=10")
	names := dirNames(b, filepath.Join(template, part))
	for _, maxRun := range []int64{2 << 20, 4 << 20, 8 << 20} {
		b.Run(fmt.Sprintf("maxrun=%dMiB", maxRun>>20), func(b *testing.B) {
			var peak uint64
			for b.Loop() {
				b.StopTimer()
				root := b.TempDir()
				if err := os.MkdirAll(filepath.Join(root, part), 0o755); err != nil {
					b.Fatal(err)
				}
				for _, n := range names {
					data, err := os.ReadFile(filepath.Join(template, part, n))
					if err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(root, part, n), data, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse
				stop, sampled := make(chan struct{}), make(chan uint64)
				go func() {
					top := base
					for {
						select {
						case <-stop:
							sampled <- top
							return
						case <-time.After(2 * time.Millisecond):
						}
						var m runtime.MemStats
						runtime.ReadMemStats(&m)
						top = max(top, m.HeapInuse)
					}
				}()
				b.StartTimer()
				c, err := Compact(context.Background(), root, files, hour.Add(2*time.Hour), CompactOptions{MaxBytes: maxRun})
				b.StopTimer()
				close(stop)
				peak = max(peak, <-sampled-base)
				if err != nil || c.Inputs != files || c.Rows != files*perFile { // every file in some run
					b.Fatalf("Compact = %+v, %v", c, err)
				}
				b.ReportMetric(float64(c.Merges), "files-out")
				b.StartTimer()
			}
			b.ReportMetric(float64(b.N*files*perFile)/b.Elapsed().Seconds(), "rows/s")
			b.ReportMetric(float64(peak)/(1<<20), "peakheapMB")
		})
	}
}

// TestCompactSeqReuse: after a spool lost its tail, a replay rewrote
// records 1-3 under the interrupted write's name 1-5, and new records took
// sequence numbers 4 and 5 again: ranges overlap. Every file is merged,
// none is taken for another's leftover.
func TestCompactSeqReuse(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	for i, name := range []string{RangeName(1, 5), RangeName(4, 5), RangeName(6, 6), RangeName(7, 7)} {
		if _, err := w.Append(otlpwire.SignalLogs, "t", synth.SeedLogs(synth.Config{Seed: int64(i), Start: hour.Add(time.Duration(10+i) * time.Minute), Resources: 1, ScopesPerResource: 1, TotalRecords: 20})); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(name); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "logs", "tenant=t", "date=2030-05-01", "hour=10")
	before := rowTexts(readLake(t, dir))
	c, err := Compact(context.Background(), root, 7, hour.Add(2*time.Hour), CompactOptions{})
	if err != nil || c.Merges != 1 || c.Inputs != 4 || c.Leftover != 0 {
		t.Fatalf("Compact = %+v, %v", c, err)
	}
	if got := rowTexts(readLake(t, dir)); !slices.Equal(got, before) {
		t.Fatalf("rows changed:\n%s", diffLines(got, before))
	}
	if names := dirNames(t, dir); len(names) != 1 || names[0] != RangeName(1, 7)+"-c.parquet" {
		t.Errorf("files %v", names)
	}
}

// countingLocker counts Lock calls.
type countingLocker struct {
	sync.Mutex
	n int
}

func (l *countingLocker) Lock() { l.Mutex.Lock(); l.n++ }

// TestCompactCorruptInput: a partition with an unreadable input is
// skipped, the others are still merged, and with a memo the bad one is
// not tried again until its files change. The lock is taken per partition.
func TestCompactCorruptInput(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	day := time.Date(2030, 5, 1, 0, 0, 0, 0, time.UTC)
	seq := uint64(0)
	for _, h := range []int{10, 11} {
		for i := range 4 {
			if _, err := w.Append(otlpwire.SignalLogs, "t", synth.SeedLogs(synth.Config{Seed: int64(i), Start: day.Add(time.Duration(h)*time.Hour + time.Duration(10+i)*time.Minute), Resources: 1, ScopesPerResource: 1, TotalRecords: 20})); err != nil {
				t.Fatal(err)
			}
			seq++
			if err := w.FlushAs(RangeName(seq, seq)); err != nil {
				t.Fatal(err)
			}
		}
	}
	bad := filepath.Join(root, "logs", "tenant=t", "date=2030-05-01", "hour=10")
	good := filepath.Join(root, "logs", "tenant=t", "date=2030-05-01", "hour=11")
	victim := filepath.Join(bad, RangeName(2, 2)+".parquet")
	b, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	for i := 8; i < len(b)/2; i++ { // the pages, not the footer
		b[i] ^= 0x5a
	}
	if err := os.WriteFile(victim, b, 0o644); err != nil {
		t.Fatal(err)
	}
	badFiles := dirNames(t, bad)
	var memo CompactMemo
	lock := &countingLocker{}
	opts := CompactOptions{Memo: &memo, Lock: lock}
	now := day.Add(14 * time.Hour)
	c, err := Compact(context.Background(), root, seq, now, opts)
	if err != nil || c.Merges != 1 || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], "hour=10") {
		t.Fatalf("Compact = %+v, %v; want hour 11 merged and hour 10 skipped", c, err)
	}
	if got := dirNames(t, bad); !slices.Equal(got, badFiles) {
		t.Errorf("the skipped partition changed: %v, was %v", got, badFiles)
	}
	if len(dirNames(t, good)) != 1 {
		t.Errorf("hour 11 not merged: %v", dirNames(t, good))
	}
	if lock.n != 2 {
		t.Errorf("lock taken %d times, want once per partition", lock.n)
	}
	c, err = Compact(context.Background(), root, seq, now, opts)
	if err != nil || len(c.Skipped) != 0 || c.Merges != 0 {
		t.Errorf("second pass = %+v, %v; want the memo to spare the bad partition", c, err)
	}
	if c, _ := Compact(context.Background(), root, seq, now.Add(2*time.Hour), opts); len(c.Skipped) != 1 {
		t.Errorf("an hour later = %+v; want the bad partition tried again", c)
	}
	// A context that ended stops the pass before any partition.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c, err := Compact(ctx, root, seq, now, CompactOptions{}); err != nil || c.Merges != 0 || len(c.Skipped) != 0 {
		t.Errorf("Compact with an ended context = %+v, %v", c, err)
	}
}

// TestPlanRuns: compaction's runs take every file once, in order, at most
// maxBytes each (a larger file alone), and about equal in size, so no
// short run is left over at the end, whatever the sizes; the 2 MiB runs
// over 60 files of ~350 KB once left the last 3 files unmerged.
func TestPlanRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(sizes []int64, maxBytes int64) {
		t.Helper()
		plan := planRuns(sizes, maxBytes)
		var total, largest int64
		for _, n := range sizes {
			total += n
			largest = max(largest, n)
		}
		i := 0
		var runSizes []int64
		for _, n := range plan {
			if n < 1 || i+n > len(sizes) {
				t.Fatalf("sizes %v, max %d: plan %v does not cut them", sizes, maxBytes, plan)
			}
			var size int64
			for _, s := range sizes[i : i+n] {
				size += s
			}
			if size > maxBytes && n > 1 {
				t.Fatalf("sizes %v, max %d: plan %v has a run of %d bytes", sizes, maxBytes, plan, size)
			}
			runSizes = append(runSizes, size)
			i += n
		}
		if i != len(sizes) {
			t.Fatalf("sizes %v, max %d: plan %v takes %d of %d files", sizes, maxBytes, plan, i, len(sizes))
		}
		if largest > maxBytes || len(plan) < 2 {
			return
		}
		even := total / int64(len(plan))
		for _, size := range runSizes {
			if size < even-largest {
				t.Fatalf("sizes %v, max %d: plan %v has a short run of %d bytes (runs of %d on average)", sizes, maxBytes, plan, size, even)
			}
		}
		if fewest := (total + maxBytes - 1) / maxBytes; int64(len(plan)) > 2*fewest+1 {
			t.Fatalf("sizes %v, max %d: %d runs, where %d could hold them", sizes, maxBytes, len(plan), fewest)
		}
	}
	check(nil, 1<<20)
	check([]int64{5 << 20}, 1<<20)
	check([]int64{100, 5 << 20, 100, 100}, 1<<20)
	for range 2000 {
		sizes := make([]int64, 1+rng.IntN(80))
		lo, spread := 1+rng.Int64N(400<<10), 1+rng.Int64N(200<<10)
		for j := range sizes {
			sizes[j] = lo + rng.Int64N(spread)
		}
		check(sizes, []int64{1 << 20, 2 << 20, 4 << 20, 8 << 20}[rng.IntN(4)])
	}
}

// TestSpanPagesCapped: a spans file's data pages hold at most spanPageRows
// rows in every column, as the Writer writes it and as compaction merges
// it (the size limit alone would let a narrow column's page hold
// thousands).
func TestSpanPagesCapped(t *testing.T) {
	body := func(i int, start time.Time) []byte {
		return synth.Traces(synth.Config{Seed: int64(i), Start: start, Resources: 4, ScopesPerResource: 1, TotalRecords: 3000})
	}
	writeThenCompact(t, otlpwire.SignalTraces, "traces", SchemaVersion, body, func(path string, pf *parquet.File, merged bool) {
		checkServiceGroups(t, path, pf, merged)
		for _, rg := range pf.RowGroups() {
			for c, cc := range rg.ColumnChunks() {
				oi, err := cc.OffsetIndex()
				if err != nil {
					t.Fatal(err)
				}
				n := oi.NumPages()
				if n < 2 && rg.NumRows() > spanPageRows {
					t.Fatalf("%s column %d: %d page for %d rows", path, c, n, rg.NumRows())
				}
				for p := range n {
					end := rg.NumRows()
					if p+1 < n {
						end = oi.FirstRowIndex(p + 1)
					}
					if rows := end - oi.FirstRowIndex(p); rows > spanPageRows {
						t.Fatalf("%s column %d page %d: %d rows, want at most %d", path, c, p, rows, spanPageRows)
					}
				}
			}
		}
	})
}

// writeThenCompact writes three files of 3,000 records of signal sig
// (body(i, start) makes file i's request) into one hour of a lake of
// schema version, calls check with each file, compacts them into one,
// calls check with it (merged true), and fails if the merge changed the
// rows.
func writeThenCompact(t *testing.T, sig otlpwire.Signal, dirName string, version int, body func(i int, start time.Time) []byte,
	check func(path string, pf *parquet.File, merged bool)) {
	t.Helper()
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush, cfg.SchemaVersion = true, version
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		if _, err := w.Append(sig, "acme", body(i, hour.Add(time.Duration(10+10*i)*time.Minute))); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(10*i+1), uint64(10*i+5))); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, dirName, "tenant=acme", "date=2030-05-01", "hour=10")
	// rowsOf checks the partition's files and returns their rows as
	// text, sorted.
	rowsOf := func(wantFiles int) []string {
		t.Helper()
		var rows []string
		files, err := filepath.Glob(filepath.Join(dir, "*.parquet"))
		if err != nil || len(files) != wantFiles {
			t.Fatalf("files %v (%v), want %d", files, err, wantFiles)
		}
		for _, path := range files {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			r := parquet.NewReader(bytes.NewReader(b))
			buf := make([]parquet.Row, 100)
			for {
				n, err := r.ReadRows(buf)
				for _, row := range buf[:n] {
					rows = append(rows, fmt.Sprint(row))
				}
				if err == io.EOF {
					break
				} else if err != nil {
					t.Fatal(err)
				}
			}
			check(path, pf, wantFiles == 1)
		}
		return slices.Sorted(slices.Values(rows))
	}
	before := rowsOf(3)
	if len(before) != 9000 {
		t.Fatalf("%d rows written, want 9000", len(before))
	}
	c, err := Compact(context.Background(), root, 50, hour.Add(2*time.Hour), CompactOptions{MinFiles: 2})
	if err != nil || c.Merges != 1 || c.Rows != 9000 {
		t.Fatalf("Compact = %+v, %v", c, err)
	}
	if after := rowsOf(1); !slices.Equal(after, before) {
		t.Fatalf("compaction changed the rows:\n%s", diffLines(after, before))
	}
}

// checkServiceGroups checks the row groups of spans file pf: each cut
// where the service changes once it holds spanGroupMinRows rows (the
// service changes only in its first spanGroupMinRows rows), and each but
// the last ending where the service changes; and, if several, that the
// file has several, so that the rule was put to the test.
func checkServiceGroups(t *testing.T, path string, pf *parquet.File, several bool) {
	t.Helper()
	groups := serviceNames(t, path, pf)
	if several && len(groups) < 2 {
		t.Fatalf("%s: %d row group, want several (one a service of %d spans or more)", path, len(groups), spanGroupMinRows)
	}
	for g, svcs := range groups {
		for i := spanGroupMinRows; i < len(svcs); i++ {
			if svcs[i] != svcs[i-1] {
				t.Fatalf("%s row group %d: service %s -> %s at row %d, past %d rows", path, g, svcs[i-1], svcs[i], i, spanGroupMinRows)
			}
		}
		if g+1 < len(groups) && svcs[len(svcs)-1] == groups[g+1][0] {
			t.Fatalf("%s: row groups %d and %d both hold service %s", path, g, g+1, svcs[len(svcs)-1])
		}
	}
}

// serviceNames returns the service_name of each row of pf, row group by
// row group.
func serviceNames(t *testing.T, path string, pf *parquet.File) [][]string {
	t.Helper()
	lc, ok := pf.Schema().Lookup("service_name")
	if !ok {
		t.Fatalf("%s: no service_name", path)
	}
	var groups [][]string
	for _, rg := range pf.RowGroups() {
		var svcs []string
		pages := rg.ColumnChunks()[lc.ColumnIndex].Pages()
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			vals := make([]parquet.Value, p.NumValues())
			if n, err := p.Values().ReadValues(vals); err != nil && err != io.EOF || int64(n) != p.NumValues() {
				t.Fatalf("%s: read %d of %d service names: %v", path, n, p.NumValues(), err)
			}
			for _, v := range vals {
				svcs = append(svcs, v.String())
			}
		}
		pages.Close()
		if int64(len(svcs)) != rg.NumRows() {
			t.Fatalf("%s: %d services for %d rows", path, len(svcs), rg.NumRows())
		}
		groups = append(groups, svcs)
	}
	return groups
}

// TestLogPagesByService: every data page of a logs file holds the
// records of one service, in every column (the dictionary-coded ones too),
// as the Writer writes it and as compaction merges it: a query on one
// service decompresses that service's pages alone (the size limit alone
// would let a narrow column's page hold several services' rows).
func TestLogPagesByService(t *testing.T) {
	body := func(i int, start time.Time) []byte {
		return synth.Logs(synth.Config{Seed: int64(i), Start: start, Resources: 6, ScopesPerResource: 1, TotalRecords: 3000})
	}
	writeThenCompact(t, otlpwire.SignalLogs, "logs", LogsSchemaVersion, body, func(path string, pf *parquet.File, _ bool) {
		groups := serviceNames(t, path, pf)
		for rgIndex, rg := range pf.RowGroups() {
			svcs := groups[rgIndex]
			if distinct := len(slices.Compact(slices.Clone(svcs))); distinct < 3 {
				t.Fatalf("%s: %d services in a row group: the test needs several", path, distinct)
			}
			dict := 0 // dictionary-coded columns checked
			for c, cc := range rg.ColumnChunks() {
				if dictionaryPages(pf, rgIndex, c) {
					dict++
				}
				oi, err := cc.OffsetIndex()
				if err != nil {
					t.Fatal(err)
				}
				n := oi.NumPages()
				for p := range n {
					first, end := oi.FirstRowIndex(p), rg.NumRows()
					if p+1 < n {
						end = oi.FirstRowIndex(p + 1)
					}
					if svcs[first] != svcs[end-1] {
						t.Fatalf("%s row group %d, column %d page %d: rows %d-%d hold services %q to %q", path, rgIndex, c, p, first, end, svcs[first], svcs[end-1])
					}
				}
			}
			if dict < 5 {
				t.Fatalf("%s: %d dictionary-coded columns, want at least 5", path, dict)
			}
		}
	})
}

// dictionaryPages reports whether column c of row group rg of pf has
// dictionary-coded data pages (its encoding stats).
func dictionaryPages(pf *parquet.File, rg, c int) bool {
	for _, s := range pf.Metadata().RowGroups[rg].Columns[c].MetaData.EncodingStats {
		if (s.PageType == format.DataPage || s.PageType == format.DataPageV2) && (s.Encoding == format.RLEDictionary || s.Encoding == format.PlainDictionary) {
			return true
		}
	}
	return false
}
