package dirlock

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestAcquire(t *testing.T) {
	dir := t.TempDir()
	l, err := Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, FileName))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(os.Getpid()) {
		t.Errorf("lock file holds %q, %v; want this PID", b, err)
	}
	_, err = Acquire(dir)
	var iu *InUseError
	if !errors.As(err, &iu) || iu.PID != os.Getpid() || !strings.Contains(err.Error(), "in use by another process (pid "+strconv.Itoa(os.Getpid())+")") {
		t.Fatalf("second Acquire: %v", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	l2, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire after Unlock: %v", err)
	}
	l2.Unlock()
	if _, err := Acquire(filepath.Join(dir, "missing")); err == nil {
		t.Error("Acquire of a missing directory succeeded")
	}
}
