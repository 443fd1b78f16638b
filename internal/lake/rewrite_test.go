package lake

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestRewriteFile: a loader's file rewritten without every third row
// holds exactly the other rows, sorted as before, under a merge's name,
// the input gone; a file whose rows all go is deleted; one none of whose
// rows match is left as it is; a spans file keeps a trace-id index that
// finds every trace it still holds.
func TestRewriteFile(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: 1, Start: hour.Add(20 * time.Minute), Resources: 3, ScopesPerResource: 2, TotalRecords: 300})); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append(otlpwire.SignalTraces, "acme", synth.Traces(synth.Config{Seed: 1, Start: hour.Add(20 * time.Minute), Resources: 2, ScopesPerResource: 1, TotalRecords: 200})); err != nil {
		t.Fatal(err)
	}
	if err := w.FlushAs(RangeName(1, 5)); err != nil {
		t.Fatal(err)
	}
	logsDir := filepath.Join(root, "logs", "tenant=acme", "date=2030-05-01", "hour=10")
	before := readLake(t, logsDir)
	if len(before) != 1 {
		t.Fatalf("%d logs files", len(before))
	}
	var kept []*lakeFile
	keptFile := &lakeFile{names: before[0].names}
	for i, row := range before[0].rows {
		if i%3 != 0 {
			keptFile.rows = append(keptFile.rows, row)
		}
	}
	kept = append(kept, keptFile)
	b := bucket.NewLocal(root)
	ctx := context.Background()
	object := "logs/tenant=acme/date=2030-05-01/hour=10/" + RangeName(1, 5) + ".parquet"
	thirds := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		var drop []int64
		for i := int64(0); i < pf.NumRows(); i += 3 {
			drop = append(drop, i)
		}
		return drop, nil
	}
	res, err := RewriteFile(ctx, b, object, RewriteOptions{ScratchDir: root}, thirds)
	if err != nil || res.Rows != 300 || res.Removed != 100 {
		t.Fatalf("rewrite: %+v, %v", res, err)
	}
	after := readLake(t, logsDir)
	if len(after) != 1 || filepath.Base(after[0].path) != RangeName(1, 5)+"-c.parquet" {
		t.Fatalf("files after: %v", dirNames(t, logsDir))
	}
	if got, want := rowTexts(after), rowTexts(kept); !slices.Equal(got, want) {
		t.Fatalf("rows after the rewrite:\n%s", diffLines(got, want))
	}
	checkSorted(t, after[0], "timestamp")
	if _, ok := after[0].file.Lookup(CountsKey); ok {
		t.Error("the rewritten file kept the input's counts")
	}

	// None matches: nothing changes.
	res, err = RewriteFile(ctx, b, "logs/tenant=acme/date=2030-05-01/hour=10/"+RangeName(1, 5)+"-c.parquet", RewriteOptions{ScratchDir: root},
		func(*parquet.File, io.ReaderAt, int64) ([]int64, error) { return nil, nil })
	if err != nil || res.Removed != 0 || len(dirNames(t, logsDir)) != 1 {
		t.Fatalf("nothing to drop: %+v %v %v", res, err, dirNames(t, logsDir))
	}

	// Spans: drop the first half; the trace-id index finds the rest.
	tracesDir := filepath.Join(root, "traces", "tenant=acme", "date=2030-05-01", "hour=10")
	spans := readLake(t, tracesDir)[0]
	half := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		var drop []int64
		for i := int64(0); i < pf.NumRows()/2; i++ {
			drop = append(drop, i)
		}
		return drop, nil
	}
	res, err = RewriteFile(ctx, b, "traces/tenant=acme/date=2030-05-01/hour=10/"+RangeName(1, 5)+".parquet", RewriteOptions{ScratchDir: root}, half)
	if err != nil || res.Removed != 100 {
		t.Fatalf("spans: %+v %v", res, err)
	}
	files := readLake(t, tracesDir)
	if len(files) != 1 || int64(len(files[0].rows)) != int64(len(spans.rows))-100 {
		t.Fatalf("spans files after: %d", len(files))
	}
	out := files[0]
	data, err := os.ReadFile(out.path)
	if err != nil {
		t.Fatal(err)
	}
	var read int64
	idx, err := ReadTraceIDs(bytes.NewReader(data), int64(len(data)), &read)
	if err != nil || idx == nil || idx.Len() == 0 {
		t.Fatalf("no trace-id index in the rewritten spans file: %v", err)
	}
	for _, row := range out.rows {
		if v, ok := out.value(row, "trace_id"); ok && !v.IsNull() && !idx.MayHold(TraceIDHash(v.ByteArray())) {
			t.Fatalf("trace %s not in the index", v.ByteArray())
		}
	}

	// All rows: the file goes.
	all := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		drop := make([]int64, pf.NumRows())
		for i := range drop {
			drop[i] = int64(i)
		}
		return drop, nil
	}
	if res, err = RewriteFile(ctx, b, "logs/tenant=acme/date=2030-05-01/hour=10/"+RangeName(1, 5)+"-c.parquet", RewriteOptions{ScratchDir: root}, all); err != nil || res.Removed != 200 {
		t.Fatalf("all rows: %+v %v", res, err)
	}
	if entries, err := os.ReadDir(logsDir); err == nil && len(entries) != 0 {
		t.Fatalf("left: %v", entries)
	}
}

// TestRewriteFileGrace: with a grace period the input stays beside the
// output, the intent with them, and the partition's next file waits
// (ErrIntentPending) until the grace is over; then the input goes and the
// next file is rewritten. A reader listing the partition (DataFiles)
// counts the input or the output, never both.
func TestRewriteFileGrace(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.ManualFlush = true
	w := newTestWriter(t, cfg)
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	ranges := [][2]uint64{{1, 5}, {6, 9}}
	for i, r := range ranges {
		if _, err := w.Append(otlpwire.SignalLogs, "acme", synth.SeedLogs(synth.Config{Seed: int64(i), Start: hour.Add(time.Duration(10+10*i) * time.Minute), Resources: 2, ScopesPerResource: 1, TotalRecords: 100})); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(r[0], r[1])); err != nil {
			t.Fatal(err)
		}
	}
	b := bucket.NewLocal(root)
	ctx := context.Background()
	object := func(r [2]uint64) string {
		return "logs/tenant=acme/date=2030-05-01/hour=10/" + RangeName(r[0], r[1]) + ".parquet"
	}
	half := func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		var drop []int64
		for i := int64(0); i < pf.NumRows(); i += 2 {
			drop = append(drop, i)
		}
		return drop, nil
	}
	rows := func() int64 {
		files, err := DataFiles(ctx, b, "logs/")
		if err != nil {
			t.Fatal(err)
		}
		n := int64(0)
		for _, f := range files {
			n += int64(len(readParquetFile(t, filepath.Join(root, filepath.FromSlash(f.Name))).rows))
		}
		return n
	}
	t0 := time.Now()
	o := RewriteOptions{ScratchDir: root, Grace: time.Minute, Now: t0}
	if res, err := RewriteFile(ctx, b, object(ranges[0]), o, half); err != nil || res.Removed != 50 {
		t.Fatalf("first: %+v %v", res, err)
	}
	dir := filepath.Join(root, "logs", "tenant=acme", "date=2030-05-01", "hour=10")
	if names := dirNames(t, dir); len(names) != 4 { // both inputs, the output, the intent
		t.Fatalf("during the grace: %v", names)
	}
	if n := rows(); n != 150 {
		t.Fatalf("a reader counts %d rows during the grace, want 150", n)
	}
	if _, err := RewriteFile(ctx, b, object(ranges[1]), o, half); !errors.Is(err, ErrIntentPending) {
		t.Fatalf("second during the grace: %v", err)
	}
	o.Now = t0.Add(2 * time.Minute)
	if res, err := RewriteFile(ctx, b, object(ranges[1]), o, half); err != nil || res.Removed != 50 {
		t.Fatalf("second after the grace: %+v %v", res, err)
	}
	if n := rows(); n != 100 {
		t.Fatalf("a reader counts %d rows, want 100", n)
	}
}
