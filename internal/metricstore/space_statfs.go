//go:build linux || darwin || freebsd

package metricstore

import (
	"os"
	"syscall"
)

// availableBytes returns the bytes this process may still write on the
// file system holding path, and true: statfs' f_bavail, or f_bfree for
// root, which may write into the blocks a file system reserves for it.
func availableBytes(path string) (uint64, bool, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, false, err
	}
	blocks := uint64(st.Bavail)
	if os.Geteuid() == 0 {
		blocks = uint64(st.Bfree)
	}
	return blocks * uint64(st.Bsize), true, nil
}
