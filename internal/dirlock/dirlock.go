// Package dirlock keeps a directory to one process at a time: an exclusive
// flock on a LOCK file in it, which holds the owner's PID so that the
// process refused can say who has it.
package dirlock

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// FileName is the lock file's name in the directory.
const FileName = "LOCK"

// InUseError is returned by Lock when another open file description holds
// the lock: another process, or another Lock in this one.
type InUseError struct {
	Dir string
	PID int // the holder's PID as it wrote it; 0 if unknown
}

func (e *InUseError) Error() string {
	if e.PID > 0 {
		return fmt.Sprintf("%s is in use by another process (pid %d)", e.Dir, e.PID)
	}
	return fmt.Sprintf("%s is in use by another process", e.Dir)
}

// Lock holds a directory's lock until Unlock.
type Lock struct{ f *os.File }

// Acquire locks dir (which must exist) without waiting and writes this
// process's PID into the lock file. A lock held elsewhere returns an
// *InUseError naming the holder's PID.
func Acquire(dir string) (*Lock, error) {
	path := filepath.Join(dir, FileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	if err := flock(f); err != nil {
		f.Close()
		if errors.Is(err, errLocked) {
			pid := 0
			if b, err := os.ReadFile(path); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			return nil, &InUseError{Dir: dir, PID: pid}
		}
		return nil, fmt.Errorf("lock %s: %w", dir, err)
	}
	// The PID is a hint for the message above; failing to write it does
	// not make the lock less held.
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, nil
}

// Unlock releases the lock. The file stays, for the next holder.
func (l *Lock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
