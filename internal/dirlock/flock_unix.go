//go:build unix

package dirlock

import (
	"errors"
	"os"
	"syscall"
)

var errLocked = errors.New("locked")

func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
