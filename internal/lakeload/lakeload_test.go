package lakeload

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.uber.org/goleak"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/quarantine"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// logsWithIDs is a request of one log per id, each with attribute test.id.
func logsWithIDs(t *testing.T, ids ...int64) []byte {
	return logsAt(t, time.Unix(1_800_000_000, 0), ids...)
}

// logsAt is logsWithIDs with timestamps at base plus id nanoseconds.
func logsAt(t *testing.T, base time.Time, ids ...int64) []byte {
	t.Helper()
	ld := plog.NewLogs()
	sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
	for _, id := range ids {
		lr := sl.LogRecords().AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(base.Add(time.Duration(id))))
		lr.Attributes().PutInt("test.id", id)
	}
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lakeIDs counts the test.id values of every logs file under root.
func lakeIDs(t *testing.T, root string) map[int64]int {
	t.Helper()
	ids := map[int64]int{}
	filepath.WalkDir(filepath.Join(root, "logs"), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || strings.HasPrefix(d.Name(), ".") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		// test.id, an int in every row: in its key column (schema
		// version 3), else in the map.
		type row struct {
			Attributes map[string]*string `parquet:"attributes"`
			TestID     *int64             `parquet:"attr_test_id,optional"`
		}
		rows := make([]row, pf.NumRows())
		if n, err := parquet.NewGenericReader[row](pf).Read(rows); int64(n) != pf.NumRows() {
			t.Fatalf("%s: read %d of %d rows: %v", p, n, pf.NumRows(), err)
		}
		for _, r := range rows {
			if r.TestID != nil {
				ids[*r.TestID]++
			}
			if v := r.Attributes["test.id"]; v != nil {
				id, err := strconv.ParseInt(*v, 10, 64)
				if err != nil {
					t.Fatal(err)
				}
				ids[id]++
			}
		}
		return nil
	})
	return ids
}

// TestReplayAfterInterruptedWrite: a write renamed its files but died
// before committing the cursor; more records arrived after. The next run
// replays exactly the interrupted range, rewrites it under the same name
// (replacing the files), then carries on: every record once.
func TestReplayAfterInterruptedWrite(t *testing.T) {
	dir := t.TempDir()
	spoolDir, lakeDir := filepath.Join(dir, "spool"), filepath.Join(dir, "lake")
	sp, err := spool.Open(spoolConfig(spoolDir))
	if err != nil {
		t.Fatal(err)
	}
	for id := int64(1); id <= 5; id++ {
		if _, err := sp.Append(otlpwire.SignalLogs, "t", time.Now(), logsWithIDs(t, 10*id, 10*id+1)); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Dir: lakeDir, Consumer: "lake", MaxDelay: time.Hour}
	l, err := New(sp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The first run reads records 1-3 and writes them, then "crashes"
	// between the rename and the commit.
	for range 3 {
		rec, err := l.cons.Next(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l.add(rec)
	}
	name := lake.RangeName(l.first, l.last)
	if err := writeIntent(filepath.Join(lakeDir, intentFile), name); err != nil {
		t.Fatal(err)
	}
	if err := l.w.FlushAs(name); err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := sp.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lakeIDs(t, lakeDir); len(got) != 6 {
		t.Fatalf("after the interrupted write: %d ids in the lake, want 6", len(got))
	}

	// The next run: records 6 and 7 arrive too.
	sp, err = spool.Open(spoolConfig(spoolDir))
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	for id := int64(6); id <= 7; id++ {
		if _, err := sp.Append(otlpwire.SignalLogs, "t", time.Now(), logsWithIDs(t, 10*id, 10*id+1)); err != nil {
			t.Fatal(err)
		}
	}
	cfg.MaxDelay = 100 * time.Millisecond
	l, err = New(sp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.stopAt != 3 || l.stopName != name {
		t.Fatalf("replay to %d as %q, want 3 as %q", l.stopAt, l.stopName, name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for l.cons.Committed() < 7 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l.Close()
	if c := l.cons.Committed(); c != 7 {
		t.Fatalf("committed %d, want 7", c)
	}
	got := lakeIDs(t, lakeDir)
	for id := int64(1); id <= 7; id++ {
		for _, x := range []int64{10 * id, 10*id + 1} {
			if got[x] != 1 {
				t.Errorf("id %d is in the lake %d times, want once", x, got[x])
			}
		}
	}
	if len(got) != 14 {
		t.Errorf("%d ids in the lake, want 14", len(got))
	}
	if _, err := os.Stat(filepath.Join(lakeDir, intentFile)); !os.IsNotExist(err) {
		t.Errorf("intent file left behind: %v", err)
	}
}

// TestLoaderRetention: the loader's retention pass removes the partitions
// older than the retention, the others stay, and it reports the lake's
// size.
func TestLoaderRetention(t *testing.T) {
	sp, lakeDir := openSpool(t)
	now := time.Now()
	for _, req := range [][]byte{logsAt(t, now.Add(-72*time.Hour), 1, 2, 3), logsAt(t, now, 4, 5, 6)} {
		if _, err := sp.Append(otlpwire.SignalLogs, "t", now, req); err != nil {
			t.Fatal(err)
		}
	}
	// Both requests are written (the old one to its own partition), then a
	// pass removes the old partition.
	l := runLoaderUntil(t, sp, Config{Dir: lakeDir, Consumer: "lake", MaxDelay: 50 * time.Millisecond,
		Retention: lake.Retention{MaxAge: 24 * time.Hour}, PruneEvery: 20 * time.Millisecond},
		func(l *Loader) bool {
			return l.cons.Committed() >= 2 && l.Pruned().Partitions > 0 && l.Pruned().KeptFiles > 0
		})
	p := l.Pruned()
	if l.cons.Committed() != 2 || p.Partitions != 1 || p.Files != 1 || p.Bytes == 0 {
		t.Fatalf("committed %d, pruned %+v; want both requests written and the old one's partition removed", l.cons.Committed(), p)
	}
	got := lakeIDs(t, lakeDir)
	if len(got) != 3 || got[4] != 1 || got[5] != 1 || got[6] != 1 {
		t.Errorf("ids in the lake after retention: %v, want 4, 5 and 6 once", got)
	}
	var size int64
	files := 0
	filepath.WalkDir(lakeDir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") {
			st, _ := d.Info()
			size += st.Size()
			files++
		}
		return err
	})
	if p.Kept != size || p.KeptFiles != files {
		t.Errorf("lake size reported %d bytes in %d files, on disk %d in %d", p.Kept, p.KeptFiles, size, files)
	}
	if u := l.Usage(); len(u) != 1 || u[0] != (lake.Usage{Signal: "logs", Tenant: "t", Files: files, Bytes: size}) {
		t.Errorf("lake usage by signal and tenant %+v, on disk %d bytes in %d files of logs of tenant t", u, size, files)
	}
	if _, err := New(sp, Config{Dir: lakeDir, Consumer: "x", MaxDelay: time.Second, Retention: lake.Retention{MaxAge: -1}}); err == nil {
		t.Error("negative retention accepted")
	}
}

// TestLoaderCompacts: small writes into an hour that is over are merged
// by the loader's pass into one file, every record still there once.
func TestLoaderCompacts(t *testing.T) {
	sp, lakeDir := openSpool(t)
	run := func(compact bool, until func(*Loader) bool) *Loader {
		t.Helper()
		return runLoaderUntil(t, sp, Config{Dir: lakeDir, Consumer: "lake", MaxDelay: 20 * time.Millisecond,
			PruneEvery: 20 * time.Millisecond, Compact: compact}, until)
	}
	// Six small writes, one per request, by a loader that does not
	// compact.
	hour := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	for i := range int64(6) {
		if _, err := sp.Append(otlpwire.SignalLogs, "t", time.Now(), logsAt(t, hour.Add(time.Duration(i)*time.Minute), 10*i, 10*i+1)); err != nil {
			t.Fatal(err)
		}
		run(false, func(l *Loader) bool { return l.Committed() == uint64(i+1) })
	}
	files, _ := filepath.Glob(filepath.Join(lakeDir, "logs", "tenant=t", "*", "*", "*.parquet"))
	if len(files) != 6 {
		t.Fatalf("%d files before compaction, want 6", len(files))
	}
	// The next loader's pass merges them.
	l := run(true, func(l *Loader) bool { return l.Compacted().Merges > 0 })
	if c := l.Compacted(); c.Merges != 1 || c.Inputs != 6 || c.Rows != 12 {
		t.Fatalf("compacted %+v, want the 6 files merged into 1", c)
	}
	files, _ = filepath.Glob(filepath.Join(lakeDir, "logs", "tenant=t", "*", "*", "*.parquet"))
	if len(files) != 1 || filepath.Base(files[0]) != lake.RangeName(1, 6)+"-c.parquet" {
		t.Errorf("lake files %v, want one covering records 1-6", files)
	}
	got := lakeIDs(t, lakeDir)
	for i := range int64(6) {
		for _, id := range []int64{10 * i, 10*i + 1} {
			if got[id] != 1 {
				t.Errorf("id %d in the lake %d times, want once", id, got[id])
			}
		}
	}
}

// spoolConfig is the config of a spool in dir that never fsyncs.
func spoolConfig(dir string) spool.Config {
	c := spool.DefaultConfig()
	c.Dir, c.Sync = dir, spool.SyncNever
	return c
}

// openSpool opens a spool under a new directory, closed when the test
// ends, and names a lake directory beside it.
func openSpool(t *testing.T) (*spool.Spool, string) {
	t.Helper()
	dir := t.TempDir()
	sp, err := spool.Open(spoolConfig(filepath.Join(dir, "spool")))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp, filepath.Join(dir, "lake")
}

// runLoaderUntil runs a loader with cfg until cond holds (or 10 s pass),
// then stops and closes it.
func runLoaderUntil(t *testing.T, sp *spool.Spool, cfg Config, cond func(*Loader) bool) *Loader {
	t.Helper()
	l, err := New(sp, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	for deadline := time.Now().Add(10 * time.Second); !cond(l) && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l.Close()
	return l
}

// logsWithBody is logsWithIDs with body on every record.
func logsWithBody(t *testing.T, body string, ids ...int64) []byte {
	t.Helper()
	var req plogotlp.ExportRequest = plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(logsWithIDs(t, ids...)); err != nil {
		t.Fatal(err)
	}
	lrs := req.Logs().ResourceLogs().At(0).ScopeLogs().At(0).LogRecords()
	for i := range lrs.Len() {
		lrs.At(i).Body().SetStr(body)
	}
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQuarantine: a spooled request the lake cannot decode, and one whose
// rows cannot be encoded as Parquet (in one batch with others), are kept
// in the quarantine and passed; every other record is in the lake exactly
// once, and a restart replays nothing.
func TestQuarantine(t *testing.T) {
	sp, root := openSpool(t)
	qdir := filepath.Join(filepath.Dir(root), "quarantine")
	q, err := quarantine.Open(quarantine.Config{Dir: qdir})
	if err != nil {
		t.Fatal(err)
	}
	malformed := []byte{0x0a, 0xff, 0x01} // resource_logs, length past the end
	poison := logsWithBody(t, "poison", 3)
	reqs := [][]byte{logsWithIDs(t, 1, 2), poison, logsWithIDs(t, 4, 5), malformed, logsWithIDs(t, 6)}
	for _, r := range reqs {
		if _, err := sp.Append(otlpwire.SignalLogs, "default", time.Now(), r); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Dir: root, Consumer: "lake", MaxDelay: 50 * time.Millisecond, Quarantine: q,
		EncodeFault: "poison"}
	l := runLoaderUntil(t, sp, cfg, func(l *Loader) bool { return l.Committed() == uint64(len(reqs)) })
	if got := l.Committed(); got != uint64(len(reqs)) {
		t.Fatalf("committed %d, want %d", got, len(reqs))
	}
	want := map[int64]int{1: 1, 2: 1, 4: 1, 5: 1, 6: 1}
	check := func(when string) {
		got := lakeIDs(t, root)
		if len(got) != len(want) {
			t.Errorf("%s: lake holds ids %v, want %v", when, got, want)
		}
		for id, n := range want {
			if got[id] != n {
				t.Errorf("%s: id %d stored %d times, want %d", when, id, got[id], n)
			}
		}
	}
	check("first run")
	if l.Skipped() != 2 || q.Count() != 2 {
		t.Errorf("skipped %d, quarantined %d; want 2 and 2", l.Skipped(), q.Count())
	}
	for seq, body := range map[int][]byte{2: poison, 4: malformed} {
		name := filepath.Join(qdir, "logs", "spool-"+strconv.Itoa(seq))
		b, err := os.ReadFile(name + ".binpb")
		if err != nil || !bytes.Equal(b, body) {
			t.Errorf("quarantined request %d: %v, bytes equal: %v", seq, err, bytes.Equal(b, body))
		}
		desc, err := os.ReadFile(name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Signal, Source, Error string
		}
		if err := json.Unmarshal(desc, &d); err != nil || d.Signal != "logs" || d.Source != "lake" || d.Error == "" {
			t.Errorf("quarantine description %d: %s (%v)", seq, desc, err)
		}
	}
	// A restart finds everything committed.
	start := time.Now()
	l2 := runLoaderUntil(t, sp, cfg, func(*Loader) bool { return time.Since(start) > 300*time.Millisecond })
	if l2.Skipped() != 0 || l2.Committed() != uint64(len(reqs)) {
		t.Errorf("after restart: skipped %d, committed %d", l2.Skipped(), l2.Committed())
	}
	check("after restart")
}

// TestLargeRecord: a spooled request larger than largeRecord is written
// in parts, each its own file named <seq>-<seq>-p<N>, between the ranges
// of the records around it; every record is in the lake once.
func TestLargeRecord(t *testing.T) {
	sp, root := openSpool(t)
	var ids []int64
	for id := int64(1000); id < 1000+200_000; id++ {
		ids = append(ids, id)
	}
	large := logsWithBody(t, strings.Repeat("x", 40), ids...)
	if len(large) <= largeRecord {
		t.Fatalf("request of %d bytes is not large", len(large))
	}
	for _, r := range [][]byte{logsWithIDs(t, 1, 2), large, logsWithIDs(t, 3)} {
		if _, err := sp.Append(otlpwire.SignalLogs, "default", time.Now(), r); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config{Dir: root, Consumer: "lake", MaxDelay: 50 * time.Millisecond}
	l := runLoaderUntil(t, sp, cfg, func(l *Loader) bool { return l.Committed() == 3 })
	if l.Committed() != 3 {
		t.Fatalf("committed %d, want 3", l.Committed())
	}
	got := lakeIDs(t, root)
	want := append([]int64{1, 2, 3}, ids...)
	if len(got) != len(want) {
		t.Errorf("%d ids in the lake, want %d", len(got), len(want))
	}
	for _, id := range want {
		if got[id] != 1 {
			t.Fatalf("id %d stored %d times", id, got[id])
		}
	}
	parts := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), "00000000000000000002-00000000000000000002-p") {
			parts++
		}
		return nil
	})
	if parts < 2 {
		t.Errorf("%d part files of the large record, want at least 2", parts)
	}
}

// TestPassesOtherSignals: records of signals the loader does not store
// (metrics kept for forwarding, logs when it stores traces only, a large
// one included) are committed without rows, never quarantined.
func TestPassesOtherSignals(t *testing.T) {
	sp, root := openSpool(t)
	metrics := synth.Generate(otlpwire.SignalMetrics, synth.Config{Resources: 1, ScopesPerResource: 2, TotalRecords: 10})
	var big []int64
	for id := int64(100); id < 100+300_000; id++ {
		big = append(big, id)
	}
	appends := []struct {
		sig  otlpwire.Signal
		body []byte
	}{
		{otlpwire.SignalLogs, logsWithIDs(t, 1, 2)},
		{otlpwire.SignalMetrics, metrics},
		{otlpwire.SignalLogs, logsWithIDs(t, big...)}, // over largeRecord
		{otlpwire.SignalMetrics, metrics},
		{otlpwire.SignalLogs, logsWithIDs(t, 3)},
	}
	if len(appends[2].body) <= largeRecord {
		t.Fatalf("the large record has %d bytes, not over %d", len(appends[2].body), largeRecord)
	}
	for _, a := range appends {
		if _, err := sp.Append(a.sig, "default", time.Now(), a.body); err != nil {
			t.Fatal(err)
		}
	}
	// Logs stored, metrics passed.
	cfg := Config{Dir: root, Consumer: "lake", MaxDelay: 50 * time.Millisecond}
	l := runLoaderUntil(t, sp, cfg, func(l *Loader) bool { return l.Committed() == uint64(len(appends)) })
	if l.Committed() != uint64(len(appends)) || l.Skipped() != 0 {
		t.Fatalf("committed %d, skipped %d", l.Committed(), l.Skipped())
	}
	if got := lakeIDs(t, root); len(got) != 3+len(big) || got[1] != 1 || got[3] != 1 || got[100] != 1 {
		t.Fatalf("lake holds %d ids, want %d", len(got), 3+len(big))
	}
	// A loader that stores traces only passes every one of these records.
	sp2, root2 := openSpool(t)
	for _, a := range appends {
		if _, err := sp2.Append(a.sig, "default", time.Now(), a.body); err != nil {
			t.Fatal(err)
		}
	}
	cfg = Config{Dir: root2, Consumer: "lake", MaxDelay: 50 * time.Millisecond, Signals: []otlpwire.Signal{otlpwire.SignalTraces}}
	l = runLoaderUntil(t, sp2, cfg, func(l *Loader) bool { return l.Committed() == uint64(len(appends)) })
	if l.Committed() != uint64(len(appends)) || l.Skipped() != 0 {
		t.Fatalf("traces only: committed %d, skipped %d", l.Committed(), l.Skipped())
	}
	if got := lakeIDs(t, root2); len(got) != 0 {
		t.Fatalf("traces only: lake holds %d log ids", len(got))
	}
	if err := (Config{Dir: root, Consumer: "lake", MaxDelay: time.Second, Signals: []otlpwire.Signal{otlpwire.SignalMetrics}}).Validate(); err == nil {
		t.Fatal("Validate accepts metrics in the lake")
	}
}

// TestTapPassesOtherSignals: a record of a signal the lake does not store,
// appended while the loader is caught up, is taken by the spool's tap (no
// copy kept in memory, not read back) and still committed; the stored
// records around it all reach the lake once.
func TestTapPassesOtherSignals(t *testing.T) {
	sp, root := openSpool(t)
	l, err := New(sp, Config{Dir: root, Consumer: "lake", MaxDelay: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	metrics := synth.Generate(otlpwire.SignalMetrics, synth.Config{Resources: 1, ScopesPerResource: 1, TotalRecords: 5})
	const n = 20
	for i := range int64(n) {
		seq, err := sp.Append(otlpwire.SignalLogs, "default", time.Now(), logsWithIDs(t, i))
		if err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(5 * time.Second); l.handed.Load() < seq; {
			if time.Now().After(deadline) {
				t.Fatalf("the loader did not read record %d", seq)
			}
			time.Sleep(time.Millisecond)
		}
		before := sp.Stats().Tapped
		if _, err := sp.Append(otlpwire.SignalMetrics, "default", time.Now(), metrics); err != nil {
			t.Fatal(err)
		}
		if sp.Stats().Tapped != before+1 {
			t.Fatalf("a metrics record appended while the loader was caught up was not taken by its tap")
		}
	}
	last := sp.Stats().LastSeq
	for deadline := time.Now().Add(10 * time.Second); l.Committed() < last; {
		if time.Now().After(deadline) {
			t.Fatalf("committed %d, want %d", l.Committed(), last)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	l.Close()
	got := lakeIDs(t, root)
	if len(got) != n {
		t.Fatalf("lake holds %d ids, want %d", len(got), n)
	}
	for id, c := range got {
		if c != 1 {
			t.Errorf("id %d in the lake %d times", id, c)
		}
	}
}

// TestLoaderNoIndexes: the loader's logs files have their counts and body
// index (the lake's default), and none with Config.NoIndexes; the same
// records in both.
func TestLoaderNoIndexes(t *testing.T) {
	for _, noIndexes := range []bool{false, true} {
		sp, root := openSpool(t)
		if _, err := sp.Append(otlpwire.SignalLogs, "default", time.Now(), logsWithIDs(t, 1, 2, 3)); err != nil {
			t.Fatal(err)
		}
		cfg := Config{Dir: root, Consumer: "lake", MaxDelay: 50 * time.Millisecond, NoIndexes: noIndexes}
		runLoaderUntil(t, sp, cfg, func(l *Loader) bool { return l.Committed() == 1 })
		if got := lakeIDs(t, root); len(got) != 3 {
			t.Fatalf("NoIndexes %v: lake holds ids %v, want 1, 2 and 3", noIndexes, got)
		}
		files, err := filepath.Glob(filepath.Join(root, "logs", "*", "*", "*", "*.parquet"))
		if err != nil || len(files) == 0 {
			t.Fatalf("NoIndexes %v: no logs file: %v", noIndexes, err)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
			if err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{lake.CountsKey, lake.GramsRegionKey} {
				if _, ok := pf.Lookup(key); ok == noIndexes {
					t.Errorf("NoIndexes %v: %s has %s: %v", noIndexes, filepath.Base(f), key, ok)
				}
			}
		}
	}
}
