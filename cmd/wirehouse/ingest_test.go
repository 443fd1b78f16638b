package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// ingestFixture writes OTLP files of every supported kind under a new
// directory and counts their records.
type ingestFixture struct {
	t       *testing.T
	dir     string
	records int // of the good files
}

func newIngestFixture(t *testing.T) *ingestFixture {
	return &ingestFixture{t: t, dir: t.TempDir()}
}

// add writes b to name under the directory and adds records to the
// count of good records.
func (fx *ingestFixture) add(name string, b []byte, records int) string {
	fx.t.Helper()
	p := filepath.Join(fx.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		fx.t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		fx.t.Fatal(err)
	}
	fx.records += records
	return p
}

func logRecords(t *testing.T, reqs ...[]byte) int {
	t.Helper()
	n := 0
	for _, r := range reqs {
		c, err := otlpwire.LogsRequest(r).LogRecordCount()
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

func spanRecords(t *testing.T, reqs ...[]byte) int {
	t.Helper()
	n := 0
	for _, r := range reqs {
		c, err := otlpwire.TracesRequest(r).SpanCount()
		if err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

func compressWith(t *testing.T, name string, b []byte) []byte {
	t.Helper()
	c, err := newCompressor(name)
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	out, err := c.compress(nil, b)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// lengthDelimited frames reqs as the Collector's file exporter does.
func lengthDelimited(reqs ...[]byte) []byte {
	var b []byte
	for _, r := range reqs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(r)))
		b = append(b, r...)
	}
	return b
}

func logsJSON(t *testing.T, req []byte) []byte {
	t.Helper()
	r := plogotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		t.Fatal(err)
	}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func tracesJSON(t *testing.T, req []byte) []byte {
	t.Helper()
	r := ptraceotlp.NewExportRequest()
	if err := r.UnmarshalProto(req); err != nil {
		t.Fatal(err)
	}
	b, err := r.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var partitionPath = regexp.MustCompile(`^(logs|traces)/tenant=[A-Za-z0-9._-]+/date=\d{4}-\d{2}-\d{2}/hour=\d{2}/[^/.][^/]*\.parquet$`)

// parquetRows returns the rows and number of the Parquet files under
// root/sig/tenant=tenant, checking that every file under root sits in a
// partition directory and that no temporary file is left.
func parquetRows(t *testing.T, root, sig, tenant string) (rows int64, files int) {
	t.Helper()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if !partitionPath.MatchString(rel) {
			t.Errorf("unexpected file %s in the lake", rel)
			return nil
		}
		if !strings.HasPrefix(rel, sig+"/tenant="+tenant+"/") {
			t.Errorf("file %s outside %s/tenant=%s", rel, sig, tenant)
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			return nil
		}
		rows += pf.NumRows()
		files++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, files
}

func TestIngestLogs(t *testing.T) {
	fx := newIngestFixture(t)
	cfg := func(seed int64, n int) synth.Config {
		return synth.Config{Seed: seed, Resources: 2, ScopesPerResource: 2, TotalRecords: n}
	}
	a := synth.Logs(cfg(0, 300))
	b := synth.SeedLogs(cfg(1, 200))
	c1, c2 := synth.Logs(cfg(2, 150)), synth.SeedLogs(cfg(3, 50))
	d1, d2 := synth.Logs(cfg(4, 120)), synth.Logs(cfg(5, 80))
	e := synth.SeedLogs(cfg(6, 70))
	fx.add("a.binpb", a, logRecords(t, a))
	fx.add("b.binpb.gz", compressWith(t, "gzip", b), logRecords(t, b))
	fx.add("sub/c.pb.zst", compressWith(t, "zstd", lengthDelimited(c1, c2)), logRecords(t, c1, c2))
	lines := append(append(append(logsJSON(t, d1), '\n'), logsJSON(t, d2)...), '\n')
	fx.add("sub/d.json", lines, logRecords(t, d1, d2))
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, logsJSON(t, e), "", "  "); err != nil {
		t.Fatal(err)
	}
	fx.add("sub/deeper/e.json.gz", compressWith(t, "gzip", pretty.Bytes()), logRecords(t, e))
	fx.add("sub/ignored.txt", []byte("not OTLP"), 0) // passed over in a directory
	trunc := synth.Logs(cfg(7, 40))
	bad := fx.add("sub/f-truncated.binpb", trunc[:len(trunc)/2], 0)
	// Another corrupt file: a length prefix past the end.
	badLen := fx.add("z-badlen.pb", append(lengthDelimited(a), 0, 0, 0x10, 0), 0)

	out := filepath.Join(t.TempDir(), "lake")
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", "--out", out, "--file-size", "65536", fx.dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 7 files skipped") {
		t.Fatalf("err = %v, want 2 of 7 files skipped\nstderr:\n%s", err, stderr.String())
	}
	t.Logf("stdout:\n%sstderr:\n%s", stdout.String(), stderr.String())
	for _, want := range []string{
		// Told from its content, the truncated file is no signal's.
		"ingest: skipped " + bad + ": offset 0: cannot tell the signal: the request is not metrics (",
		"; not logs (resource_logs[1]: truncated length-delimited field",
		"ingest: skipped " + badLen + ": offset " + itoa(4+len(a)) + ": bad length prefix",
	} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if strings.Contains(stderr.String(), "files,") {
		t.Errorf("progress written on a quick run:\n%s", stderr.String())
	}
	for _, want := range []string{
		"auto of tenant default into " + out + "\n",
		"files      5 read, 2 skipped, of 7\n",
		"records    " + itoa(fx.records) + " in ",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout.String())
		}
	}
	rows, files := parquetRows(t, out, "logs", "default")
	if rows != int64(fx.records) {
		t.Errorf("%d rows in %d Parquet files, want the %d records of the good files", rows, files, fx.records)
	}
	if !strings.Contains(stdout.String(), "parquet    "+itoa(files)+" files, ") {
		t.Errorf("summary does not count the %d Parquet files:\n%s", files, stdout.String())
	}
}

func TestIngestTracesJSONSummary(t *testing.T) {
	fx := newIngestFixture(t)
	var reqs [][]byte
	for seed := range int64(4) {
		reqs = append(reqs, synth.Traces(synth.Config{Seed: seed, Resources: 3, ScopesPerResource: 1, TotalRecords: 100 + int(seed)}))
	}
	var names []string
	names = append(names, fx.add("t0.binpb.zst", compressWith(t, "zstd", reqs[0]), spanRecords(t, reqs[0])))
	names = append(names, fx.add("t1.pb.gz", compressWith(t, "gzip", lengthDelimited(reqs[1], reqs[2])), spanRecords(t, reqs[1], reqs[2])))
	names = append(names, fx.add("t3.json.zst", compressWith(t, "zstd", tracesJSON(t, reqs[3])), spanRecords(t, reqs[3])))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	args := append([]string{"ingest", "--signal", "traces", "--tenant", "team-a", "--out", out, "--row-group-rows", "50", "--json"}, names...)
	if err := run(context.Background(), args, &stdout, &stderr); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr.String())
	}
	if stderr.Len() > 0 {
		t.Errorf("stderr on a clean quick run: %s", stderr.String())
	}
	var sum ingestSummary
	if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
		t.Fatalf("summary %q: %v", stdout.String(), err)
	}
	rows, files := parquetRows(t, out, "traces", "team-a")
	var proto int64
	for _, r := range reqs {
		proto += int64(len(r))
	}
	if sum.Signal != "traces" || sum.Tenant != "team-a" || sum.Files != 3 || sum.FilesRead != 3 || sum.FilesSkipped != 0 ||
		sum.Records != int64(fx.records) || rows != sum.Records || sum.ParquetFiles != files || sum.ParquetBytes <= 0 ||
		sum.ProtoBytes < proto*9/10 || sum.DiskBytes <= 0 || sum.Interrupted {
		t.Errorf("summary %+v; lake has %d rows in %d files; want %d records, about %d protobuf bytes", sum, rows, files, fx.records, proto)
	}
}

// TestIngestWrongSignal ingests a protobuf traces file as logs
// (--signal logs): the lake refuses it, and the file is reported and
// skipped, saying the signal was given.
func TestIngestWrongSignal(t *testing.T) {
	fx := newIngestFixture(t)
	traces := fx.add("traces.binpb", synth.Traces(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 5}), 0)
	logs := synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 5})
	fx.add("logs.binpb", logs, logRecords(t, logs))
	jsonTraces := fx.add("traces.json", tracesJSON(t, synth.Traces(synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 5})), 0)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", "--signal", "logs", "--out", out, fx.dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "2 of 3 files skipped") {
		t.Fatalf("err = %v, want 2 of 3 files skipped\n%s", err, stderr.String())
	}
	for _, want := range []string{"skipped " + traces + ": offset 0: as logs (given): request 0: ", "skipped " + jsonTraces + ": offset 0: wrong signal"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if rows, _ := parquetRows(t, out, "logs", "default"); rows != int64(fx.records) {
		t.Errorf("%d rows, want %d", rows, fx.records)
	}
}

// TestIngestInterrupt cancels the run once the first file is in: ingest
// stops before the next, writes what it has, prints a partial summary and
// returns the context's error.
func TestIngestInterrupt(t *testing.T) {
	defer func(d time.Duration) { ingestProgressEvery = d }(ingestProgressEvery)
	ingestProgressEvery = 0 // progress after every file: the hook below
	fx := newIngestFixture(t)
	first := synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 25})
	fx.add("1.binpb", first, 0)
	fx.add("2.binpb", synth.Logs(synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 25}), 0)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout bytes.Buffer
	stderr := &cancelWriter{cancel: cancel}
	out := t.TempDir()
	err := run(ctx, []string{"ingest", "--out", out, fx.dir}, &stdout, stderr)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 1 of 2 files") {
		t.Fatalf("err = %v, want an interruption after 1 of 2 files", err)
	}
	if !strings.Contains(stdout.String(), "(interrupted)") || !strings.Contains(stdout.String(), "files      1 read, 0 skipped, of 2") {
		t.Errorf("summary:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "ingest: 1/2 files, 25 records") {
		t.Errorf("progress: %q", stderr.String())
	}
	if rows, _ := parquetRows(t, out, "logs", "default"); rows != 25 {
		t.Errorf("%d rows written, want the 25 of the first file", rows)
	}
}

// cancelWriter cancels a context on its first write.
type cancelWriter struct {
	bytes.Buffer
	cancel func()
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.cancel()
	return w.Buffer.Write(p)
}

func TestIngestFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "x.binpb")
	if err := os.WriteFile(good, synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 1}), 0o644); err != nil {
		t.Fatal(err)
	}
	txt := filepath.Join(dir, "x.txt")
	if err := os.WriteFile(txt, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "lake")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no out", []string{good}, "--out"},
		{"no files", []string{"--out", out}, "no files"},
		{"signal with files", []string{"--out", out, "--signal", "metrics", good}, "--signal"},
		{"file size 100", []string{"--out", out, "--file-size", "100", good}, "--file-size"},
		{"negative row group rows", []string{"--out", out, "--row-group-rows", "-1", good}, "--row-group-rows"},
		{"max file size 0", []string{"--out", out, "--max-file-size", "0", good}, "--max-file-size"},
		{"tenant with slash", []string{"--out", out, "--tenant", "a/b", good}, "--tenant"},
		{"empty tenant", []string{"--out", out, "--tenant", "", good}, "--tenant"},
		{"not OTLP", []string{"--out", out, good, txt}, "x.txt"},
		{"unknown flag", []string{"--out", out, "--bogus", good}, "bogus"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), append([]string{"ingest"}, tc.args...), &stdout, &stderr)
			var ue usageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a usage error naming %s", err, tc.want)
			}
		})
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "--out", out, filepath.Join(dir, "missing.binpb")}, &stdout, &stderr); err == nil ||
		!strings.Contains(err.Error(), "missing.binpb") {
		t.Errorf("missing file: err = %v", err)
	}
	if err := run(context.Background(), []string{"ingest", "-h"}, &stdout, &stderr); err != nil || !strings.Contains(stderr.String(), "usage: wirehouse ingest") {
		t.Errorf("-h: %v, %q", err, stderr.String())
	}
}

// TestIngestZstdFrames reads a zstd file of several frames, as appending
// compressed chunks to one file makes.
func TestIngestZstdFrames(t *testing.T) {
	fx := newIngestFixture(t)
	r1 := synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 30})
	r2 := synth.Logs(synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 20})
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	b := enc.EncodeAll(lengthDelimited(r1), nil)
	b = enc.EncodeAll(lengthDelimited(r2), b)
	fx.add("frames.pb.zst", b, logRecords(t, r1, r2))
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "--out", out, fx.dir}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if rows, _ := parquetRows(t, out, "logs", "default"); rows != int64(fx.records) {
		t.Errorf("%d rows, want %d", rows, fx.records)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestIngestWideAttributes: the file that used to crash ingest (one
// record with 70,000 distinct attribute keys) is written like any other,
// the keys past the column limit in attributes_overflow.
func TestIngestWideAttributes(t *testing.T) {
	fx := newIngestFixture(t)
	wide := wideLogsRequest(t, []int64{1, 2}, []int{70000, 3})
	fx.add("wide.binpb", wide, 2)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"ingest", "--out", out, fx.dir}, &stdout, &stderr); err != nil {
		t.Fatalf("ingest: %v\n%s", err, stderr.String())
	}
	got := recordAttrCounts(t, filepath.Join(out, "logs"))
	if got[1] != 70001 || got[2] != 4 {
		t.Errorf("record attributes read back %v, want 1: 70001, 2: 4", got)
	}
}

// TestIngestDetectsSignal: without --signal each file's signal comes from
// its content, protobuf or JSON: logs and spans land in their partitions,
// a metrics file is skipped saying what it is.
func TestIngestDetectsSignal(t *testing.T) {
	fx := newIngestFixture(t)
	c := synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 2, TotalRecords: 30}
	fx.add("a.binpb", synth.Logs(c), 0)
	fx.add("b.binpb", synth.Traces(c), 0)
	fx.add("c.json", tracesJSON(t, synth.Traces(synth.Config{Seed: 4, Resources: 1, ScopesPerResource: 1, TotalRecords: 7})), 0)
	metrics := fx.add("d.binpb", synth.Generate(otlpwire.SignalMetrics, c), 0)
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"ingest", "--out", out, fx.dir}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 4 files skipped") {
		t.Fatalf("err = %v, want 1 of 4 files skipped\n%s", err, stderr.String())
	}
	if want := "skipped " + metrics + ": a metrics file (protobuf content: metrics with 30 records; not logs ("; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
	}
	for sig, want := range map[string]int64{"logs": 30, "traces": 37} {
		// Each signal's tree alone, as parquetRows expects one.
		one := t.TempDir()
		if err := os.Rename(filepath.Join(out, sig), filepath.Join(one, sig)); err != nil {
			t.Fatal(err)
		}
		if rows, _ := parquetRows(t, one, sig, "default"); rows != want {
			t.Errorf("%d %s rows, want %d", rows, sig, want)
		}
	}
	if !strings.Contains(stdout.String(), "(30 log records, 37 spans)") {
		t.Errorf("summary:\n%s", stdout.String())
	}
}
