package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// segment is the in-memory state of one segment file.
type segment struct {
	name string // file name, segName(base)
	base uint64 // sequence number of its first record
	last uint64 // sequence number of its last record; base-1 when empty
	size int64  // bytes of complete records
	// index samples (seq, offset) about every indexEvery bytes, so that a
	// consumer can start reading near a sequence number. index[0] is the
	// first record.
	index []indexEntry
	// reused: the file is a recycled one, whose old records may lie past
	// size until it is truncated (when it stops being the current one).
	reused bool
}

type indexEntry struct {
	seq uint64
	off int64
}

// indexEvery is the spacing of segment index entries in bytes.
const indexEvery = 256 << 10

func (g *segment) empty() bool { return g.last < g.base }

// add accounts for a record of n bytes with sequence number seq appended to g.
func (g *segment) add(seq uint64, n int64) {
	if g.size >= int64(len(g.index))*indexEvery {
		g.index = append(g.index, indexEntry{seq, g.size})
	}
	g.last = seq
	g.size += n
}

// seek returns the offset and sequence number of the indexed record
// closest before seq (g must not be empty).
func (g *segment) seek(seq uint64) (int64, uint64) {
	i := sort.Search(len(g.index), func(i int) bool { return g.index[i].seq > seq }) - 1
	if i < 0 {
		i = 0
	}
	return g.index[i].off, g.index[i].seq
}

const segSuffix = ".seg"

// freeSuffix ends the name of a consumed segment file kept for reuse
// (<segment name>.free), at most maxFree of them.
const freeSuffix = ".free"

// maxFree is how many consumed segment files are kept for reuse. Writing
// over a file whose pages the page cache still holds costs the kernel
// less than filling a new file, and deleting a file costs too. Their
// bytes count against Config.MaxBytes, and they are deleted first when
// the spool is full.
const maxFree = 8

// freeFile is a consumed segment file kept for reuse.
type freeFile struct {
	name string
	size int64
}

// segName is the file name of the segment whose first record is seq: 20
// decimal digits, so that names sort like numbers.
func segName(seq uint64) string {
	return fmt.Sprintf("%020d%s", seq, segSuffix)
}

// parseSegName returns the base of a segment file name.
func parseSegName(name string) (uint64, bool) {
	digits, ok := strings.CutSuffix(name, segSuffix)
	if !ok || len(digits) != 20 {
		return 0, false
	}
	for _, c := range []byte(digits) {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}

// scanSegment reads every record of dir/g.name, filling g's last, size and
// index, and truncates the file at the first bad record: one that is cut
// short, fails its checksum or a header check, or whose sequence number is
// not the next one (starting at g.base, staying below before). The repair
// is returned as a *CorruptError; err is any other failure. A whole record
// numbered below g.base is what a recycled file held before: the file is
// truncated there too, but that is no repair.
func scanSegment(dir string, g *segment, before uint64, sync bool) (repair *CorruptError, err error) {
	path := filepath.Join(dir, g.name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	end := fi.Size()
	r := segReader{ahead: 1 << 20}
	r.reset(f, g.name)
	var h RecordHeader
	g.last, g.size, g.index = g.base-1, 0, g.index[:0]
	stale := false
	for g.size < end {
		_, n, err := r.record(g.size, end, &h)
		if err == nil && h.Seq < g.base {
			// A whole record of the file's earlier life as another
			// segment (it was recycled): this segment ends here.
			stale = true
			break
		}
		if err == nil && (h.Seq != g.last+1 || h.Seq >= before) {
			err = &CorruptError{Segment: g.name, Offset: g.size,
				Err: fmt.Errorf("%w: sequence number %d, want %d", ErrHeader, h.Seq, g.last+1)}
		}
		if errors.As(err, &repair) {
			break
		}
		if err != nil {
			return nil, err
		}
		g.add(h.Seq, n)
	}
	if repair == nil && !stale {
		return nil, nil
	}
	if repair != nil {
		repair.Dropped = end - g.size
	}
	if err := f.Truncate(g.size); err != nil {
		return nil, fmt.Errorf("spool: repair %s: %w", g.name, err)
	}
	if sync {
		if err := f.Sync(); err != nil {
			return nil, fmt.Errorf("spool: repair %s: %w", g.name, err)
		}
	}
	return repair, f.Close()
}
