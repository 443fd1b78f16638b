// Package watch tells when files change, for settings that are re-read
// without a restart (TLS certificates, bearer tokens). It polls: a file
// has changed when its size or modification time differs from when it was
// last marked, or it is another file (os.SameFile), which catches rewrites
// in place and the rename of a new file over the old one (as cert-manager
// and Kubernetes secrets do), even one copied with its old time.
package watch

import (
	"fmt"
	"os"
	"time"
)

// Files watches a fixed list of files. It is not safe for concurrent use:
// callers hold their own lock around it.
type Files struct {
	paths   []string
	every   time.Duration
	stamps  []stamp
	checked time.Time
}

type stamp struct {
	size int64
	mod  time.Time
	info os.FileInfo // for os.SameFile: a file renamed over keeps size and time with cp -p
}

func (s stamp) same(st os.FileInfo) bool {
	return s.info != nil && s.size == st.Size() && s.mod.Equal(st.ModTime()) && os.SameFile(s.info, st)
}

// New watches paths, looking at them at most once per every; call Mark
// after reading them.
func New(every time.Duration, paths ...string) *Files {
	return &Files{paths: paths, every: every, stamps: make([]stamp, len(paths))}
}

// Mark records the files as they are now: what Changed compares with.
// Calling it just before reading the files means that a file replaced
// during the read is seen as changed at the next look, and that files
// which fail to load are tried again only once they change again.
func (f *Files) Mark() error {
	for i, p := range f.paths {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("watch: %w", err)
		}
		f.stamps[i] = stamp{size: st.Size(), mod: st.ModTime(), info: st}
	}
	return nil
}

// Changed reports whether a file differs from its mark (or cannot be
// read). It looks at most once per interval and reports false in between.
func (f *Files) Changed(now time.Time) bool {
	if now.Sub(f.checked) < f.every {
		return false
	}
	f.checked = now
	for i, p := range f.paths {
		st, err := os.Stat(p)
		if err != nil || !f.stamps[i].same(st) {
			return true
		}
	}
	return false
}
