//go:build unix

package loadgen

import (
	"syscall"
	"time"
)

// selfCPU returns the CPU time (user plus system) this process has used so
// far, from getrusage at microsecond resolution; 0 if that fails.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
