package metricstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/tsdb/wlog"
)

// frag encodes one write log fragment of type typ holding data.
func frag(typ byte, data []byte) []byte {
	h := make([]byte, walHeaderSize, walHeaderSize+len(data))
	h[0] = typ
	binary.BigEndian.PutUint16(h[1:], uint16(len(data)))
	binary.BigEndian.PutUint32(h[3:], crc32.Checksum(data, castagnoli))
	return append(h, data...)
}

// upTo returns data of bytes c for a fragment that starts after used
// bytes of its page and ends exactly at the end of the page.
func upTo(used int, c byte) []byte { return bytes.Repeat([]byte{c}, walPageSize-used-walHeaderSize) }

// page pads the fragments to a whole page.
func page(frags ...[]byte) []byte {
	p := bytes.Join(frags, nil)
	if len(p) > walPageSize {
		panic("page overflow")
	}
	return append(p, make([]byte, walPageSize-len(p))...)
}

// writeSegments writes segment files 0, 1, ... of the given contents
// into dir/wal and returns the wal directory.
func writeSegments(t *testing.T, dir string, segs ...[]byte) string {
	t.Helper()
	wal := filepath.Join(dir, "wal")
	if err := os.MkdirAll(wal, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range segs {
		if err := os.WriteFile(wlog.SegmentName(wal, i), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wal
}

// readWAL reads the records of every segment of the write log in dir
// with wlog's Reader, one reader per segment as the TSDB's head does when
// it opens, and returns them as strings, and the first error.
func readWAL(t *testing.T, dir string) ([]string, error) {
	t.Helper()
	first, last, err := wlog.Segments(dir)
	if err != nil {
		t.Fatal(err)
	}
	var recs []string
	for i := first; i <= last && i >= 0; i++ {
		s, err := wlog.OpenReadSegment(wlog.SegmentName(dir, i))
		if err != nil {
			t.Fatal(err)
		}
		sr := wlog.NewSegmentBufReader(s)
		r := wlog.NewReader(sr)
		for r.Next() {
			recs = append(recs, string(r.Record()))
		}
		sr.Close()
		if err := r.Err(); err != nil {
			return recs, err
		}
	}
	return recs, nil
}

func mend(t *testing.T, dir string) *mendPlan {
	t.Helper()
	p, err := planMend(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.apply(slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestMendTornRecords builds segments as wlog's WL.log leaves them after
// a failed page write, and checks that wlog's Reader fails on them, and
// after mending reads every record but the torn one; faults are left as
// they are, for Prometheus' repair, and counted in the space it needs.
func TestMendTornRecords(t *testing.T) {
	r1, r2, r3 := []byte("record one"), []byte("record two"), []byte("record three")
	r1f := frag(recFull, r1)
	bad := frag(recFull, r2)
	bad[3] ^= 0xff // checksum
	for _, tc := range []struct {
		name      string
		segs      [][]byte
		want      []string // records read after mending
		tears     int
		fault     string // the reader error left, "" for none
		faultSize int64  // repair bytes
	}{{
		name: "first fragment, then a record on the next page",
		segs: [][]byte{append(page(r1f, frag(recFirst, upTo(len(r1f), 'x'))), page(frag(recFull, r2), frag(recFull, r3))...)},
		want: []string{"record one", "record two", "record three"}, tears: 1,
	}, {
		name: "first and middle fragments",
		segs: [][]byte{bytes.Join([][]byte{
			page(r1f, frag(recFirst, upTo(len(r1f), 'x'))),
			page(frag(recMiddle, upTo(0, 'y'))),
			page(frag(recFirst, upTo(0, 'z'))),
			page(frag(recLast, []byte("end")), frag(recFull, r2)),
		}, nil)},
		want: []string{"record one", strings.Repeat("z", walPageSize-walHeaderSize) + "end", "record two"}, tears: 1,
	}, {
		name: "at the end of a segment, records in the next",
		segs: [][]byte{page(r1f, frag(recFirst, upTo(len(r1f), 'x'))), page(frag(recFull, r2))},
		want: []string{"record one", "record two"}, tears: 1,
	}, {
		name: "two tears in one segment",
		segs: [][]byte{bytes.Join([][]byte{
			page(r1f, frag(recFirst, upTo(len(r1f), 'x'))),
			page(frag(recFull, r2), frag(recFirst, upTo(len(r1f), 'x'))),
			page(frag(recFull, r3)),
		}, nil)},
		want: []string{"record one", "record two", "record three"}, tears: 2,
	}, {
		name: "at the end of the last segment",
		segs: [][]byte{page(r1f, frag(recFirst, upTo(len(r1f), 'x')))},
		want: []string{"record one"}, tears: 1,
	}, {
		name: "no tear",
		segs: [][]byte{page(r1f, frag(recFull, r2)), page(frag(recFull, r3))},
		want: []string{"record one", "record two", "record three"},
	}, {
		name: "checksum mismatch: left to the repair",
		segs: [][]byte{page(r1f, bad), page(frag(recFull, r3))},
		want: []string{"record one"}, fault: "unexpected checksum", faultSize: walPageSize,
	}, {
		name: "tear before a checksum mismatch: mended, the mismatch left",
		segs: [][]byte{bytes.Join([][]byte{page(r1f, frag(recFirst, upTo(len(r1f), 'x'))), page(frag(recFull, r3), bad)}, nil)},
		want: []string{"record one", "record three"}, tears: 1, fault: "unexpected checksum", faultSize: 2 * walPageSize,
	}, {
		name: "a first fragment short of its page (a crash), then padding: left, the reader drops it",
		segs: [][]byte{page(r1f, frag(recFirst, []byte("cut")))},
		want: []string{"record one"},
	}, {
		name: "a short last page (a crash mid-write): left",
		segs: [][]byte{page(r1f, frag(recFull, r2))[:len(r1f)+walHeaderSize+3]},
		want: []string{"record one"}, fault: "unexpected checksum", faultSize: int64(len(r1f) + walHeaderSize + 3),
	}, {
		name: "a middle fragment without a first",
		segs: [][]byte{page(r1f, frag(recMiddle, r2))},
		want: []string{"record one"}, fault: "unexpected middle record", faultSize: walPageSize,
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			wal := writeSegments(t, dir, tc.segs...)
			if tc.tears > 0 {
				if _, err := readWAL(t, wal); err == nil {
					t.Fatal("wlog reads the torn segments without an error")
				}
			}
			p := mend(t, dir)
			if len(p.tears) != tc.tears {
				t.Errorf("%d tears mended, want %d", len(p.tears), tc.tears)
			}
			if got := p.repairBytes(); got != uint64(tc.faultSize) {
				t.Errorf("repair bytes %d, want %d", got, tc.faultSize)
			}
			recs, err := readWAL(t, wal)
			if tc.fault == "" && err != nil || tc.fault != "" && (err == nil || !strings.Contains(err.Error(), tc.fault)) {
				t.Errorf("read after mending: %v, want %q", err, tc.fault)
			}
			if !slices.Equal(recs, tc.want) {
				t.Errorf("records after mending: %.40q, want %.40q", recs, tc.want)
			}
			// Mending again finds nothing to do.
			if p := mend(t, dir); len(p.tears) != 0 {
				t.Errorf("second mend: %d tears", len(p.tears))
			}
		})
	}
}

// TestMendSkipsCheckpointedSegments: the segments up to the last
// checkpoint are not read when the TSDB opens, so a fault there costs
// nothing, and what follows is mended.
func TestMendSkipsCheckpointedSegments(t *testing.T) {
	dir := t.TempDir()
	garbage := bytes.Repeat([]byte{0xee}, walPageSize)
	wal := writeSegments(t, dir, garbage, garbage,
		page(frag(recFull, []byte("a")), frag(recFirst, upTo(len(frag(recFull, []byte("a"))), 'x'))),
		page(frag(recFull, []byte("b"))))
	if err := os.Mkdir(filepath.Join(wal, "checkpoint.00000001"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := mend(t, dir)
	if len(p.tears) != 1 || len(p.faults) != 0 {
		t.Fatalf("tears %v, faults %v", p.tears, p.faults)
	}
	if !strings.HasSuffix(p.tears[0].path, "00000002") {
		t.Errorf("tear in %s, want segment 2", p.tears[0].path)
	}
}

// TestMendNothing: a TSDB directory without a WAL, or an empty one, has
// nothing to mend.
func TestMendNothing(t *testing.T) {
	dir := t.TempDir()
	if p := mend(t, filepath.Join(dir, "absent")); len(p.tears)+len(p.faults) != 0 {
		t.Errorf("absent directory: %+v", p)
	}
	if err := os.Mkdir(filepath.Join(dir, "wal"), 0o755); err != nil {
		t.Fatal(err)
	}
	if p := mend(t, dir); len(p.tears)+len(p.faults) != 0 {
		t.Errorf("empty WAL: %+v", p)
	}
}

// TestSpaceError: the error names the directory, both sizes and what to
// do, and Open refuses a file system without the space.
func TestSpaceError(t *testing.T) {
	err := error(&SpaceError{Dir: "/data/metrics", Free: 4096, Need: 3 << 20})
	for _, want := range []string{"/data/metrics", "0.0 MiB (4096 bytes) available", "3.0 MiB (3145728 bytes) needed", "free space", "start again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err, want)
		}
	}
	if err := checkSpace(filepath.Join(t.TempDir(), "not", "yet"), 1); err != nil {
		t.Errorf("a directory still to create: %v", err)
	}
	var se *SpaceError
	if err := checkSpace(t.TempDir(), 1<<62); !errors.As(err, &se) {
		t.Errorf("an exabyte: %v", err)
	}
}

// TestMendZeroesOnlyTheTear: the bytes of the torn record become zeros,
// every other byte stays.
func TestMendZeroesOnlyTheTear(t *testing.T) {
	dir := t.TempDir()
	r1f := frag(recFull, []byte("kept"))
	seg := append(page(r1f, frag(recFirst, upTo(len(r1f), 'x'))), page(frag(recFull, []byte("after")))...)
	wal := writeSegments(t, dir, seg)
	mend(t, dir)
	got, err := os.ReadFile(wlog.SegmentName(wal, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(seg)
	clear(want[len(r1f):walPageSize])
	if !bytes.Equal(got, want) {
		t.Error("mended segment differs from the original outside the torn record, or was not zeroed")
	}
}
