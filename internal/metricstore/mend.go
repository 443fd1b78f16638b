package metricstore

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/prometheus/prometheus/tsdb/record"
	"github.com/prometheus/prometheus/tsdb/wlog"
	"github.com/prometheus/prometheus/util/compression"
)

// The framing of Prometheus' write logs (tsdb/wlog, the WAL and the
// out-of-order WBL): a segment is a sequence of 32 KiB pages; a page holds
// fragments, each a 7-byte header (type byte, uint16 big-endian length,
// uint32 big-endian CRC-32C of the data) and its data, then zeros to the
// end of the page when the next header does not fit. A record is one
// recFull fragment, or recFirst, any number of recMiddle and recLast. The
// low three bits of the type byte are the fragment type, bits 3 and 4 say
// whether the record is snappy or zstd compressed.
const (
	walPageSize   = 32 * 1024
	walHeaderSize = 7
	walTypeMask   = 0x07
	walSnappy     = 1 << 3
	walZstd       = 1 << 4

	recPageTerm = 0 // the rest of the page is zeros
	recFull     = 1
	recFirst    = 2
	recMiddle   = 3
	recLast     = 4
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A torn record is what wlog's WL.log leaves when writing a page fails in
// the middle of a record: the record's first fragments are in the page,
// the rest is never written, and the page itself is written again by the
// next Log, whose record then starts the next page. A torn record always
// runs to the end of a page (recFirst is cut because the page is full,
// each recMiddle fills a page), so zeroing its fragments, headers
// included, turns them into page padding that the reader skips: the
// records after it, in the same segment and in the later ones, read as
// they were written. Its Log returned an error, so the samples it held
// were never acknowledged. Without the zeros, Prometheus' reader stops at
// the record after the tear ("unexpected full record", or "last record is
// torn" at the end of a segment), and WL.Repair truncates the segment
// there and deletes every later segment, with every sample acknowledged
// after the failed write.

// tear is a torn record in a segment file: bytes [off, end) of path,
// end a page boundary.
type tear struct {
	path     string
	off, end int64
}

// walFault is the first place in a write log that the reader cannot read
// even with the tears zeroed: Prometheus' repair rewrites its segment
// (size bytes) up to it and deletes the segments after it.
type walFault struct {
	path   string
	offset int64
	size   int64
	reason string
}

// mendPlan is what mending the write logs of a TSDB directory does.
type mendPlan struct {
	tears  []tear
	faults []walFault // at most one per write log
}

// repairBytes is how many bytes Prometheus' repair of the faults may
// write: the size of each segment it rewrites.
func (p *mendPlan) repairBytes() uint64 {
	var n uint64
	for _, f := range p.faults {
		n += uint64(f.size)
	}
	return n
}

// planMend reads the write logs of the TSDB in dir, the WAL (wal) and the
// out-of-order WBL (wbl), as Prometheus reads them when it opens the TSDB
// (the WAL from the segment after its last checkpoint), and returns the
// torn records to zero and the faults left for Prometheus' repair. It
// changes nothing. A missing directory has nothing to mend.
func planMend(dir string) (*mendPlan, error) {
	p := &mendPlan{}
	for _, sub := range []string{"wal", wlog.WblDirName} {
		if err := p.planLog(filepath.Join(dir, sub)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

func (p *mendPlan) planLog(dir string) error {
	first, last, err := wlog.Segments(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list write log segments in %s: %w", dir, err)
	}
	if first < 0 {
		return nil
	}
	// The segments up to the last checkpoint are not read (they are
	// only waiting to be deleted).
	_, cp, err := wlog.LastCheckpoint(dir)
	switch {
	case errors.Is(err, record.ErrNotFound):
	case err != nil:
		return fmt.Errorf("find the last checkpoint in %s: %w", dir, err)
	default:
		first = max(first, cp+1)
	}
	for i := first; i <= last; i++ {
		tears, fault, err := scanSegment(wlog.SegmentName(dir, i))
		if err != nil {
			return err
		}
		p.tears = append(p.tears, tears...)
		if fault != nil {
			// The repair deletes the later segments: nothing there
			// is read.
			p.faults = append(p.faults, *fault)
			return nil
		}
	}
	return nil
}

// fragment is the byte range of one fragment in a segment file.
type fragment struct{ off, end int64 }

// scanSegment reads the segment file at path as wlog's Reader reads it,
// page by page, a short last page padded with zeros, and returns its torn
// records and, if the Reader would fail on it with those zeroed, where.
func scanSegment(path string) ([]tear, *walFault, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open write log segment: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil, fmt.Errorf("stat write log segment: %w", err)
	}
	size := st.Size()
	var (
		tears []tear
		data  []byte // the data of the record being read, if compressed
		dec   = compression.NewSyncDecodeBuffer()
		rec   []fragment // the record being read
		last  byte       // the type of the last fragment header read
		page  = make([]byte, walPageSize)
		r     = bufio.NewReaderSize(f, 4*walPageSize)
	)
	fault := func(off int64, format string, args ...any) ([]tear, *walFault, error) {
		return tears, &walFault{path: path, offset: off, size: size, reason: fmt.Sprintf(format, args...)}, nil
	}
	// torn records rec as torn, if it runs to the end of a page in the
	// file, as the records WL.log leaves do.
	torn := func() bool {
		for _, fr := range rec {
			if fr.end%walPageSize != 0 || fr.end > size {
				return false
			}
		}
		tears = append(tears, tear{path: path, off: rec[0].off, end: rec[len(rec)-1].end})
		rec = rec[:0]
		return true
	}
	for base := int64(0); base < size; base += walPageSize {
		n, err := io.ReadFull(r, page)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			clear(page[n:])
		} else if err != nil {
			return nil, nil, fmt.Errorf("read write log segment %s: %w", path, err)
		}
		for pos := 0; pos < walPageSize; {
			off := base + int64(pos)
			typ := page[pos] & walTypeMask
			last = typ
			if typ == recPageTerm {
				for _, b := range page[pos+1:] {
					if b != 0 {
						return fault(off, "non-zero byte in page padding")
					}
				}
				break
			}
			if pos+walHeaderSize > walPageSize {
				return fault(off, "fragment header across a page boundary")
			}
			length := int(binary.BigEndian.Uint16(page[pos+1:]))
			crc := binary.BigEndian.Uint32(page[pos+3:])
			end := pos + walHeaderSize + length
			if end > walPageSize {
				return fault(off, "fragment of %d bytes across a page boundary", length)
			}
			if crc32.Checksum(page[pos+walHeaderSize:end], castagnoli) != crc {
				return fault(off, "checksum mismatch")
			}
			fr := fragment{off, base + int64(end)}
			switch typ {
			case recFull, recFirst:
				if len(rec) > 0 && !torn() {
					return fault(off, "unexpected fragment type %d after an unfinished record", typ)
				}
				data = append(data[:0], page[pos+walHeaderSize:end]...)
				if typ == recFirst {
					rec = append(rec, fr)
				}
			case recMiddle, recLast:
				if len(rec) == 0 {
					return fault(off, "fragment type %d without a first fragment", typ)
				}
				rec = append(rec, fr)
				data = append(data, page[pos+walHeaderSize:end]...)
				if typ == recLast {
					rec = rec[:0]
				}
			default:
				return fault(off, "unknown fragment type %d", typ)
			}
			// A whole record must decompress, as the Reader decompresses
			// it (the flags of its last fragment say how).
			if c := compressionOf(page[pos]); c != compression.None && (typ == recFull || typ == recLast) {
				if _, err := compression.Decode(c, data, dec); err != nil {
					return fault(off, "record does not decompress: %v", err)
				}
			}
			pos = end
		}
	}
	// At the end, the Reader finds a record torn when its last fragment
	// is the last thing in the segment; one followed by page padding it
	// drops without a word.
	if len(rec) > 0 && last != recPageTerm && !torn() {
		return fault(size, "last record is torn")
	}
	return tears, nil, nil
}

// compressionOf is the compression a fragment's type byte names, as
// wlog's Reader reads it.
func compressionOf(b byte) compression.Type {
	switch {
	case b&walSnappy != 0:
		return compression.Snappy
	case b&walZstd != 0:
		return compression.Zstd
	}
	return compression.None
}

// apply zeroes the torn records, each with one write over its bytes
// (which allocates nothing on file systems that overwrite in place), and
// syncs each file; log gets one line per record, and a warning per fault
// left for Prometheus' repair.
func (p *mendPlan) apply(log *slog.Logger) error {
	for _, t := range p.tears {
		f, err := os.OpenFile(t.path, os.O_WRONLY, 0)
		if err != nil {
			return fmt.Errorf("open write log segment: %w", err)
		}
		_, err = f.WriteAt(make([]byte, t.end-t.off), t.off)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("zero torn record in %s at %d: %w", t.path, t.off, err)
		}
		log.Warn("metricstore: zeroed a torn write-ahead log record left by a failed write (never acknowledged); the records after it are kept",
			"segment", t.path, "offset", t.off, "bytes", t.end-t.off)
	}
	for _, f := range p.faults {
		log.Warn("metricstore: write-ahead log corrupt; Prometheus' repair will drop the segment from here and every later segment",
			"segment", f.path, "offset", f.offset, "reason", f.reason)
	}
	return nil
}
