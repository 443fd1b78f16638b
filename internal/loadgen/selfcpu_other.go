//go:build !unix

package loadgen

import "time"

// selfCPU is 0 where getrusage is not available: the summary then has no
// client CPU time.
func selfCPU() time.Duration { return 0 }
