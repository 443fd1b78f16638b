package lakeload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// lakeRows counts the rows a reader counts in the bucket's logs: the
// files lake.DataFiles lists, each opened and its footer read. A file
// listed but gone by the time it is opened is an error: a reader would
// miss its rows.
func lakeRows(ctx context.Context, b bucket.Bucket) (int64, error) {
	files, err := lake.DataFiles(ctx, b, "logs/")
	if err != nil {
		return 0, err
	}
	var rows int64
	for _, f := range files {
		obj, err := b.Open(ctx, f.Name)
		if err != nil {
			return 0, fmt.Errorf("open %s: %w", f.Name, err)
		}
		pf, err := parquet.OpenFile(obj, obj.Size())
		obj.Close()
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", f.Name, err)
		}
		rows += pf.NumRows()
	}
	return rows, nil
}

// TestCompactionRaceOnS3: two nodes' loaders write small files of a past
// hour into one bucket of a real S3-compatible store (SeaweedFS), then
// both run their compaction passes at once, three times. One node holds
// the lease and does every merge; a reader sampling the bucket all along
// counts every row exactly once at every moment (inputs and outputs
// overlap only while the intent names them); at the end each node's files
// are one merged file and a plain glob of the bucket counts every row
// once too.
func TestCompactionRaceOnS3(t *testing.T) {
	srv := s3test.Start(t)
	b := srv.Bucket(srv.CreateBucket("race"), "lake")
	ctx := context.Background()
	hour := time.Now().Add(-3 * time.Hour).Truncate(time.Hour)
	const files = 8
	var total int64
	loaders := map[string]*Loader{}
	for ni, node := range []string{"node-a", "node-b"} {
		sp, dir := openSpool(t)
		for i := range int64(files) {
			id := int64(ni)*1000 + 10*i
			if _, err := sp.Append(otlpwire.SignalLogs, "t", time.Now(), logsAt(t, hour.Add(time.Duration(i)*time.Minute), id, id+1, id+2)); err != nil {
				t.Fatal(err)
			}
			total += 3
		}
		l, err := New(sp, Config{Dir: dir, Bucket: b, Node: node, Consumer: "lake", MaxDelay: 20 * time.Millisecond,
			Compact: true, CompactGrace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		// One file per record, as a loader fed slowly writes them.
		for range files {
			rec, err := l.cons.Next(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l.add(rec)
			if err := l.write(l.w, rec.Seq, rec.Seq, l.rangeName(rec.Seq, rec.Seq)); err != nil {
				t.Fatal(err)
			}
			l.first, l.last = 0, 0
		}
		if err := l.publish(ctx); err != nil {
			t.Fatal(err)
		}
		loaders[node] = l
	}
	if n, err := lakeRows(ctx, b); err != nil || n != total {
		t.Fatalf("before compaction a reader counts %d rows (%v), want %d", n, err, total)
	}
	// The sampler reads the bucket as a query does, over and over.
	var samples, bad atomic.Int64
	var badMu sync.Mutex
	var badWhy []string
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			n, err := lakeRows(ctx, b)
			samples.Add(1)
			if err != nil || n != total {
				bad.Add(1)
				badMu.Lock()
				badWhy = append(badWhy, fmt.Sprintf("%d rows, %v", n, err))
				badMu.Unlock()
			}
		}
	})
	for pass := range 3 {
		var pw sync.WaitGroup
		for _, l := range loaders {
			pw.Go(func() { l.prune(ctx) })
		}
		pw.Wait()
		if pass < 2 {
			time.Sleep(1200 * time.Millisecond) // past the grace period
		}
	}
	close(stop)
	wg.Wait()
	if bad.Load() > 0 {
		t.Errorf("%d of %d samples during compaction counted wrong, e.g. %s", bad.Load(), samples.Load(), badWhy[0])
	}
	t.Logf("%d samples of the bucket during the race, all %d rows", samples.Load(), total)
	a, bb := loaders["node-a"].Compacted(), loaders["node-b"].Compacted()
	if !(a.Merges == 2 && bb.Merges == 0 || a.Merges == 0 && bb.Merges == 2) {
		t.Errorf("merges: node-a %d, node-b %d; want one node to do both", a.Merges, bb.Merges)
	}
	// Each node's files merged into one; no intent left; a plain listing
	// (what a glob sees) counts every row once.
	var names []string
	var rows int64
	for attrs, err := range b.List(ctx, "logs/") {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, attrs.Name[strings.LastIndexByte(attrs.Name, '/')+1:])
		obj, err := b.Open(ctx, attrs.Name)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(obj, obj.Size())
		if err != nil {
			t.Fatalf("%s: %v", attrs.Name, err)
		}
		rows += pf.NumRows()
	}
	want := []string{"node-a." + lake.RangeName(1, files) + "-c.parquet", "node-b." + lake.RangeName(1, files) + "-c.parquet"}
	if strings.Join(names, " ") != strings.Join(want, " ") || rows != total {
		t.Errorf("bucket holds %v (%d rows), want %v (%d rows)", names, rows, want, total)
	}
	if _, _, err := b.GetVersion(ctx, CompactionLease); err != nil {
		t.Errorf("no compaction lease in the bucket: %v", err)
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		t.Fatal("context ended")
	}
}
