// Package diskfull fills a file system for tests of what a store does
// when its disk is full: a small tmpfs each test mounts, and a file that
// takes its free space. It is for tests only and needs root (the tests
// that use it skip without).
package diskfull

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size bytes on a new directory, unmounted at the
// end of the test. It skips the test where it cannot mount one (not
// root).
func Tmpfs(t testing.TB, size int) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs to fill needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		t.Skipf("cannot mount a tmpfs to fill: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmount the test's tmpfs: %v", err)
		}
	})
	return dir
}

// Fill appends to the file name, 4 KiB at a time, until its file system
// is full.
func Fill(t testing.TB, name string) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := bytes.Repeat([]byte{0xfe}, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}
