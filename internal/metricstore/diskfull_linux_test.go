//go:build linux

package metricstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/diskfull"
	"github.com/wirehouse/wirehouse/internal/syncbuf"
)

// fillDisk fills the file system of dir with a file in it, and returns
// the file's name.
func fillDisk(t *testing.T, dir string) string {
	t.Helper()
	name := filepath.Join(dir, "filler")
	diskfull.Fill(t, name)
	return name
}

// freeBytes makes n bytes of the filler free again.
func freeBytes(t *testing.T, filler string, n int64) {
	t.Helper()
	st, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filler, st.Size()-n); err != nil {
		t.Fatal(err)
	}
}

// TestMendWlogTears fails wlog's own writer on a full tmpfs at the points
// where WL.log leaves a torn record, then frees the space and logs more:
// wlog's Reader stops at the tear (where Prometheus' repair would drop
// every later record), and after mending reads every record whose Log
// succeeded.
func TestMendWlogTears(t *testing.T) {
	rec := func(name string, n int) []byte { return append([]byte(name+":"), bytes.Repeat([]byte{name[0]}, n)...) }
	for _, tc := range []struct {
		name    string
		pages   int   // segment size
		free    int64 // bytes freed before the failing Log
		failing []byte
		then    [][]byte
		tears   int
	}{
		// The first fragment's page cannot be written.
		{"first fragment", 8, 0, rec("x", 40<<10), [][]byte{rec("b", 10), rec("c", 10)}, 1},
		// The first page is written, the middle one cannot be.
		{"first and middle fragments", 8, 7 * 4096, rec("x", 80<<10), [][]byte{rec("b", 10), rec("c", 10)}, 1},
		// The torn record ends its segment; the next record does not
		// fit in what is left and starts the next segment.
		{"end of a segment", 2, 0, rec("x", 40<<10), [][]byte{rec("y", 40<<10), rec("z", 10)}, 1},
		// The last page of a record that fits one page fails: the
		// record is whole in the page, written by the next Log; no tear.
		{"final flush", 8, 0, rec("x", 6<<10), [][]byte{rec("b", 10)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := diskfull.Tmpfs(t, 1<<20)
			wal := filepath.Join(dir, "wal")
			w, err := wlog.NewSize(nil, nil, wal, tc.pages*walPageSize, compression.None)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { w.Close() }) // before the unmount, if the test fails
			want := []string{string(rec("a", 100))}
			if err := w.Log(rec("a", 100)); err != nil {
				t.Fatal(err)
			}
			filler := fillDisk(t, dir)
			if tc.free > 0 {
				freeBytes(t, filler, tc.free)
			}
			if err := w.Log(tc.failing); !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("Log on a full disk: %v", err)
			}
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if tc.tears == 0 {
				want = append(want, string(tc.failing)) // written later
			}
			for _, r := range tc.then {
				if err := w.Log(r); err != nil {
					t.Fatal(err)
				}
				want = append(want, string(r))
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if tc.tears > 0 {
				got, err := readWAL(t, wal)
				if err == nil {
					t.Fatal("wlog read the torn record without an error")
				}
				t.Logf("before mending, wlog reads %d of %d records, then: %v", len(got), len(want), err)
			}
			p := mend(t, dir)
			if len(p.tears) != tc.tears || len(p.faults) != 0 {
				t.Errorf("mended %d tears (faults %v), want %d", len(p.tears), p.faults, tc.tears)
			}
			got, err := readWAL(t, wal)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("after mending: %d records %.30q, err %v; want %.30q", len(got), got, err, want)
			}
		})
	}
}

// Load for the disk-full tests: dfWorkers senders, each request of worker
// w, number i, holds one point at dfTime(i) in each of dfSeries series of
// w's and dfNew series of the request's own (so that series records are
// written while the disk fills too). Its samples record takes more than
// a WAL page, most writes of the WAL are of whole pages in the middle of
// a record, and most failures leave a torn record.
const (
	dfWorkers = 3
	dfSeries  = 4000
	dfNew     = 20
)

func dfTime(i int) int64 { return t0.UnixMilli() + int64(i) }

func dfRequest(t testing.TB, w, i int) []byte {
	md := pmetric.NewMetrics()
	rm := md.ResourceMetrics().AppendEmpty()
	rm.Resource().Attributes().PutStr("service.name", "disk-full")
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName("df")
	g := m.SetEmptyGauge()
	add := func(attrs ...any) {
		p := g.DataPoints().AppendEmpty()
		for j := 0; j < len(attrs); j += 2 {
			p.Attributes().PutInt(attrs[j].(string), int64(attrs[j+1].(int)))
		}
		p.SetTimestamp(pcommon.NewTimestampFromTime(time.UnixMilli(dfTime(i))))
		p.SetDoubleValue(float64(i) + float64(g.DataPoints().Len())/7) // hardly compressible
	}
	for k := range dfSeries {
		add("w", w, "k", k)
	}
	for k := range dfNew {
		add("w", w, "r", i, "k", k)
	}
	b, err := (&pmetric.ProtoMarshaler{}).MarshalMetrics(md)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dfLoad sends the disk-full load and keeps the numbers of the
// acknowledged requests of each worker.
type dfLoad struct {
	mu      sync.Mutex
	acked   [dfWorkers][]int
	refused int
	errs    []error // other than ErrUnavailable
	next    [dfWorkers]int
}

// send sends one request of each worker, concurrently.
func (l *dfLoad) send(t *testing.T, s *Store) {
	var wg sync.WaitGroup
	for w := range dfWorkers {
		i := l.next[w]
		l.next[w]++
		req := dfRequest(t, w, i)
		wg.Go(func() {
			res, err := s.AppendOTLP(context.Background(), "", req)
			l.mu.Lock()
			defer l.mu.Unlock()
			switch {
			case err == nil && res.Rejected == 0:
				l.acked[w] = append(l.acked[w], i)
			case errors.Is(err, ErrUnavailable):
				l.refused++
			default:
				l.errs = append(l.errs, fmt.Errorf("worker %d request %d: %+v %w", w, i, res, err))
			}
		})
	}
	wg.Wait()
}

func (l *dfLoad) ackedPoints() int {
	n := 0
	for _, a := range l.acked {
		n += len(a) * (dfSeries + dfNew)
	}
	return n
}

// check checks that every acknowledged point is in s, and returns how
// many points s holds.
func (l *dfLoad) check(t *testing.T, s *Store, when string) {
	t.Helper()
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	stored := map[string]map[int64]bool{}
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "df"))
	points := 0
	for ss.Next() {
		ls := ss.At().Labels()
		key := ls.Get("w") + "/" + ls.Get("r") + "/" + ls.Get("k")
		ts := map[int64]bool{}
		it := ss.At().Iterator(nil)
		for it.Next() != 0 {
			tm, _ := it.At()
			ts[tm] = true
			points++
		}
		stored[key] = ts
	}
	if err := ss.Err(); err != nil {
		t.Fatal(err)
	}
	missing := 0
	for w, reqs := range l.acked {
		for _, i := range reqs {
			for k := range dfSeries {
				if !stored[fmt.Sprintf("%d//%d", w, k)][dfTime(i)] {
					missing++
				}
			}
			for k := range dfNew {
				if !stored[fmt.Sprintf("%d/%d/%d", w, i, k)][dfTime(i)] {
					missing++
				}
			}
		}
	}
	t.Logf("%s: %d points acknowledged, %d stored, %d acknowledged missing", when, l.ackedPoints(), points, missing)
	if missing > 0 {
		t.Errorf("%s: %d of %d acknowledged points missing", when, missing, l.ackedPoints())
	}
}

// untilFailed sends until the store refuses a request, then a few more
// (all refused), and checks that nothing failed otherwise.
func (l *dfLoad) untilFailed(t *testing.T, s *Store) {
	t.Helper()
	for i := 0; s.Accepting(); i++ {
		if i == 10000 {
			t.Fatal("the store still accepts metrics on a full disk")
		}
		l.send(t, s)
	}
	before := l.ackedPoints()
	for range 5 {
		l.send(t, s)
	}
	if l.ackedPoints() != before {
		t.Error("requests acknowledged while the store is failed")
	}
	if len(l.errs) > 0 {
		t.Fatalf("errors other than ErrUnavailable: %v", l.errs)
	}
}

// untilAccepted sends until every worker has had requests acknowledged
// again after a failure.
func (l *dfLoad) untilAccepted(t *testing.T, s *Store) {
	t.Helper()
	var n [dfWorkers]int
	for w := range n {
		n[w] = len(l.acked[w])
	}
	deadline := time.Now().Add(20 * time.Second)
	for w := 0; w < dfWorkers; {
		if len(l.acked[w]) >= n[w]+5 {
			w++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("no metrics accepted 20 s after space returned (%d refused)", l.refused)
		}
		l.send(t, s)
		time.Sleep(time.Millisecond)
	}
}

// dirState maps every file under dir but skip to its size and checksum,
// and every directory to "dir".
func dirState(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	state := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == skip {
			return err
		}
		if d.IsDir() {
			state[p] = "dir"
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		state[p] = fmt.Sprintf("%d %x", len(b), sha256.Sum256(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return state
}

// TestStoreDiskFull fills the file system under a store while three
// senders write to it: the commit whose WAL write fails, and every one
// after it, is refused with ErrUnavailable; once space returns the store
// reopens its TSDB by itself and accepts again; every acknowledged point
// is stored then, and after a restart.
func TestStoreDiskFull(t *testing.T) {
	dir := diskfull.Tmpfs(t, 24<<20)
	logs := &syncbuf.Buffer{}
	reg := prometheus.NewRegistry()
	cfg := testConfig(filepath.Join(dir, "metrics"), func(c *Config) {
		c.Logger, c.Registerer = slog.New(slog.NewTextHandler(logs, nil)), reg
	})
	recoverSoon := func(c *config) { c.recoverEvery = 10 * time.Millisecond }
	s := openWith(t, cfg, recoverSoon)
	t.Cleanup(func() { s.Close() }) // before the unmount, if the test fails
	var l dfLoad
	for range 20 {
		l.send(t, s)
	}
	filler := fillDisk(t, dir)
	l.untilFailed(t, s)
	t.Logf("failed after %d acknowledged points; %d requests refused", l.ackedPoints(), l.refused)
	l.check(t, s, "failed")
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	l.untilAccepted(t, s)
	for range 20 {
		l.send(t, s)
	}
	if len(l.errs) > 0 {
		t.Fatalf("errors: %v", l.errs)
	}
	l.check(t, s, "after the reopen")
	if !strings.Contains(logs.String(), "reopened the TSDB") {
		t.Errorf("no reopen in the log:\n%s", logs)
	}
	// The reopened TSDB registered its metrics again, and counts from 0.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			values[mf.GetName()] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	if values["wirehouse_metricstore_reopens_total"] < 1 || values["wirehouse_metricstore_accepting"] != 1 ||
		values["prometheus_tsdb_wal_writes_failed_total"] != 0 || values["prometheus_tsdb_head_series"] == 0 {
		t.Errorf("metrics after the reopen: %v", values)
	}
	t.Logf("torn records zeroed: %d", strings.Count(logs.String(), "zeroed a torn"))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, cfg, recoverSoon)
	l.check(t, s, "after a restart")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreDiskFullRestart: a store fails on a full disk and is closed
// (the space comes back just for the close: a close on a full disk leaks
// the WAL's goroutine, which the test does not allow); started again with
// the disk full, Open refuses with a *SpaceError and changes nothing;
// started once space is back, it zeroes the torn records and holds every
// acknowledged point.
func TestStoreDiskFullRestart(t *testing.T) {
	dir := diskfull.Tmpfs(t, 24<<20)
	logs := &syncbuf.Buffer{}
	mdir := filepath.Join(dir, "metrics")
	cfg := testConfig(mdir, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(logs, nil)) })
	recoverLate := func(c *config) { c.recoverEvery = time.Hour }
	s := openWith(t, cfg, recoverLate)
	t.Cleanup(func() { s.Close() }) // before the unmount, if the test fails
	var l dfLoad
	for range 20 {
		l.send(t, s)
	}
	filler := fillDisk(t, dir)
	l.untilFailed(t, s)
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The disk has room, so commits succeed again; but they come after
	// a failed write, maybe use a series whose record it lost: refused
	// until the TSDB is reopened (not here: every hour).
	acked := l.ackedPoints()
	for range 5 {
		l.send(t, s)
	}
	if l.ackedPoints() != acked || len(l.errs) > 0 {
		t.Fatalf("requests after the failure acknowledged before a reopen (errors %v)", l.errs)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	filler = fillDisk(t, dir)
	before := dirState(t, dir, filler)
	_, err := openStore(cfg, recoverLate)
	var se *SpaceError
	if !errors.As(err, &se) || se.Dir != mdir || se.Need < openReserve {
		t.Fatalf("Open on a full disk: %v", err)
	}
	t.Logf("Open on a full disk: %v", err)
	if after := dirState(t, dir, filler); !maps.Equal(before, after) {
		t.Errorf("the refused Open changed the directory:\nbefore %v\nafter  %v", before, after)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	s = openWith(t, cfg, recoverLate)
	t.Logf("torn records zeroed at the restart: %d", strings.Count(logs.String(), "zeroed a torn"))
	l.check(t, s, "restarted after space returned")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStoreReopenWaitsForReaders: the reopen after a write error waits
// for the queriers open on the failed TSDB, which go on reading it;
// meanwhile writes, remote writes included, and new queriers are refused
// with ErrUnavailable. Once the last querier closes, the TSDB reopens and
// the store accepts writes again.
func TestStoreReopenWaitsForReaders(t *testing.T) {
	dir := diskfull.Tmpfs(t, 24<<20)
	s := openWith(t, testConfig(filepath.Join(dir, "metrics")), func(c *config) { c.recoverEvery = 10 * time.Millisecond })
	t.Cleanup(func() { s.Close() })
	var l dfLoad
	for range 5 {
		l.send(t, s)
	}
	filler := fillDisk(t, dir)
	l.untilFailed(t, s)
	q, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64)
	if err != nil {
		t.Fatal(err)
	}
	app := s.Appendable().AppenderV2(context.Background())
	if _, err := app.Append(0, labels.FromStrings("__name__", "rw"), 0, dfTime(0), 1, nil, nil, storage.AOptions{}); !errors.Is(err, ErrUnavailable) {
		t.Errorf("remote-write append on the failed store: %v", err)
	}
	if err := app.Commit(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("remote-write commit on the failed store: %v", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The recovery takes the failed TSDB out of service, then waits for q.
	waitUntil(t, "the reopen under way", func() bool {
		s.db.mu.RLock()
		defer s.db.mu.RUnlock()
		return s.db.cur == nil
	})
	if _, err := s.Queryable().Querier(math.MinInt64, math.MaxInt64); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a querier while reopening: %v", err)
	}
	if _, err := s.AppendOTLP(context.Background(), "", dfRequest(t, 0, 1000)); !errors.Is(err, ErrUnavailable) {
		t.Errorf("a write while reopening: %v", err)
	}
	ss := q.Select(context.Background(), false, nil, labels.MustNewMatcher(labels.MatchEqual, "__name__", "df"))
	n := 0
	for ss.Next() {
		n++
	}
	if ss.Err() != nil || n == 0 {
		t.Errorf("the open querier read %d series, err %v", n, ss.Err())
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the store accepting again", s.Accepting)
	acked := l.ackedPoints()
	l.send(t, s)
	if len(l.errs) > 0 || l.ackedPoints() != acked+dfWorkers*(dfSeries+dfNew) {
		t.Errorf("after the reopen: %d points acknowledged of %d, errors %v", l.ackedPoints()-acked, dfWorkers*(dfSeries+dfNew), l.errs)
	}
	l.check(t, s, "after the reopen")
}

// waitUntil polls cond until it holds, failing the test after 20 s (a
// bound on a hang, not a timed assertion).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after 20 s", what)
		}
	}
}
