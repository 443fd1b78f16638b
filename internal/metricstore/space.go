package metricstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// openReserve is the free space Open and a reopen want beyond what
// Prometheus' WAL repair may rewrite: what opening the TSDB and the first
// appends write (a WAL page, the lock file, a head chunk file of 128 KiB
// preallocated at its first chunk, an out-of-order WBL page), with room
// to spare.
const openReserve = 1 << 20

// SpaceError is the error of Open, and of the reopen that follows a write
// error, when the file system holding the store has less free space than
// opening it may need: what Prometheus' repair of a corrupt write-ahead
// log segment rewrites, plus a reserve for the first writes. Nothing was
// changed on disk. Free space on the file system and start again.
type SpaceError struct {
	Dir  string // the store's directory
	Free uint64 // bytes available to the process
	Need uint64 // bytes opening may write
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough free space for the metric store in %s: %s available, %s needed; nothing was changed: free space on its file system and start again",
		e.Dir, formatBytes(e.Free), formatBytes(e.Need))
}

// formatBytes formats n in MiB, with the exact count.
func formatBytes(n uint64) string {
	return fmt.Sprintf("%.1f MiB (%d bytes)", float64(n)/(1<<20), n)
}

// checkSpace returns a *SpaceError when the file system holding dir (or
// its nearest existing parent, when dir does not exist yet) has less than
// need bytes available. Where the free space is unknown it returns nil.
func checkSpace(dir string, need uint64) error {
	p := dir
	for {
		free, known, err := availableBytes(p)
		if err == nil {
			if known && free < need {
				return &SpaceError{Dir: dir, Free: free, Need: need}
			}
			return nil
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, os.ErrNotExist) || parent == p {
			return fmt.Errorf("read free space of %s: %w", p, err)
		}
		p = parent
	}
}
