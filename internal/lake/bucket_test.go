package lake

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// plainBucket hides the optional interfaces of the bucket it wraps (a
// bucket.FileUploader, PrefixDeleter, Sweeper), as an object store without
// them would: the lake must then take its general paths.
type plainBucket struct{ bucket.Bucket }

// writeRanges writes n loader files of tenant t into hour, one per
// record, with w (a ManualFlush writer).
func writeRanges(t *testing.T, w *Writer, hour time.Time, n int) {
	t.Helper()
	for i := range n {
		body := synth.SeedLogs(synth.Config{Seed: int64(i), Start: hour.Add(time.Duration(10+i) * time.Minute), Resources: 1, ScopesPerResource: 1, TotalRecords: 20})
		if _, err := w.Append(otlpwire.SignalLogs, "t", body); err != nil {
			t.Fatal(err)
		}
		if err := w.FlushAs(RangeName(uint64(i+1), uint64(i+1))); err != nil {
			t.Fatal(err)
		}
	}
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("%s holds %v, want nothing", dir, names)
	}
}

// TestLakeOnBucket: with WriterConfig.Bucket, CompactBucket and PruneBucket the
// lake writes, merges and removes its files through a bucket that has none
// of the optional interfaces, encoding in its scratch directories and
// leaving nothing there.
func TestLakeOnBucket(t *testing.T) {
	lakeDir, scratch := t.TempDir(), t.TempDir()
	b := plainBucket{bucket.NewLocal(lakeDir).WithoutSync()}
	cfg := testConfig("")
	cfg.Bucket, cfg.ScratchDir, cfg.ManualFlush = b, scratch, true
	w, err := NewWriter(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
	writeRanges(t, w, hour, 4)
	dir := "logs/tenant=t/date=2030-05-01/hour=10/"
	if got, want := w.FlushedNames(), []string{dir + RangeName(4, 4) + ".parquet"}; !slices.Equal(got, want) {
		t.Errorf("FlushedNames = %v, want %v", got, want)
	}
	if got := w.Flushed(); got != nil {
		t.Errorf("Flushed with a bucket = %v, want nil", got)
	}
	emptyDir(t, scratch)
	before := rowTexts(readLake(t, lakeDir))
	if len(before) != 4*20 {
		t.Fatalf("%d rows written, want 80", len(before))
	}

	compactScratch := t.TempDir()
	c, err := CompactBucket(t.Context(), b, 4, hour.Add(2*time.Hour), CompactOptions{ScratchDir: compactScratch})
	if err != nil || c.Merges != 1 || c.Inputs != 4 || len(c.Skipped) != 0 {
		t.Fatalf("CompactBucket = %+v, %v", c, err)
	}
	emptyDir(t, compactScratch)
	if got := dirNames(t, filepath.Join(lakeDir, filepath.FromSlash(dir))); !slices.Equal(got, []string{RangeName(1, 4) + "-c.parquet"}) {
		t.Errorf("after compaction: %v", got)
	}
	if got := rowTexts(readLake(t, lakeDir)); !slices.Equal(got, before) {
		t.Fatalf("rows changed by compaction:\n%s", diffLines(got, before))
	}

	p, err := PruneBucket(t.Context(), b, Retention{MaxAge: time.Hour}, hour.Add(3*time.Hour))
	if err != nil || p != (Pruned{Partitions: 1, Files: 1, Bytes: p.Bytes}) || p.Bytes == 0 {
		t.Fatalf("PruneBucket = %+v, %v", p, err)
	}
	emptyDir(t, lakeDir)
}

// faultBucket fails the uploads of merged files: before storing them, or
// after (as an object store's upload can fail with the object stored).
type faultBucket struct {
	bucket.Bucket
	after bool
}

var errInjected = errors.New("injected upload fault")

func (f faultBucket) Upload(ctx context.Context, name string, r io.Reader) error {
	if !strings.HasSuffix(name, "-c.parquet") {
		return f.Bucket.Upload(ctx, name, r)
	}
	if f.after {
		if err := f.Bucket.Upload(ctx, name, r); err != nil {
			return err
		}
	}
	return errInjected
}

// TestCompactUploadFails: when the merged file's upload fails, whether or
// not it stored the file, the intent stays and the next pass settles it:
// it removes the inputs of an output in place, or forgets the merge and
// does it again. Rows are never lost or doubled.
func TestCompactUploadFails(t *testing.T) {
	for _, after := range []bool{false, true} {
		name := "before-storing"
		if after {
			name = "after-storing"
		}
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			cfg := testConfig(root)
			cfg.ManualFlush = true
			w := newTestWriter(t, cfg)
			hour := time.Date(2030, 5, 1, 10, 0, 0, 0, time.UTC)
			writeRanges(t, w, hour, 4)
			dir := filepath.Join(root, "logs", "tenant=t", "date=2030-05-01", "hour=10")
			before := rowTexts(readLake(t, dir))
			b := faultBucket{bucket.NewLocal(root).WithoutSync(), after}
			c, err := CompactBucket(t.Context(), b, 4, hour.Add(2*time.Hour), CompactOptions{ScratchDir: root})
			if err != nil || c.Merges != 0 || len(c.Skipped) != 1 || !strings.Contains(c.Skipped[0], errInjected.Error()) {
				t.Fatalf("CompactBucket = %+v, %v; want the merge skipped", c, err)
			}
			if _, err := os.Stat(filepath.Join(dir, intentFile)); err != nil {
				t.Fatalf("intent of the failed upload: %v", err)
			}
			c, err = Compact(t.Context(), root, 4, hour.Add(2*time.Hour), CompactOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if after && (c.Leftover != 4 || c.Merges != 0) || !after && (c.Leftover != 0 || c.Merges != 1) {
				t.Errorf("the next pass = %+v", c)
			}
			if got := dirNames(t, dir); !slices.Equal(got, []string{RangeName(1, 4) + "-c.parquet"}) {
				t.Errorf("files after the next pass: %v", got)
			}
			if got := rowTexts(readLake(t, root)); !slices.Equal(got, before) {
				t.Fatalf("rows changed:\n%s", diffLines(got, before))
			}
		})
	}
}
