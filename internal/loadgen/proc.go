package loadgen

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// ProcessCPU returns the CPU time (user plus system) process pid has used
// so far, from /proc/<pid>/stat, at its 10 ms resolution.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("read server CPU time: %w", err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime, fields 14 and 15 of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may hold spaces and parentheses, so fields are counted after the last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("read server CPU time: no command name in %q", b)
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, fmt.Errorf("read server CPU time: %d fields after the command name, want at least 13", len(f))
	}
	// A process would need 146 years of CPU to pass this many ticks; more
	// would overflow a Duration.
	const maxTicks = int64(math.MaxInt64/(time.Second/clockTicks)) / 2
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(string(s), 10, 64)
		if err != nil || n < 0 || n > maxTicks {
			return 0, fmt.Errorf("read server CPU time: bad field %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * (time.Second / clockTicks), nil
}
