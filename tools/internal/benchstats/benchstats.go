// Package benchstats holds the small statistics the benchmark drivers
// (tools/logbench, tools/tracebench) print.
package benchstats

import (
	"fmt"
	"slices"
	"time"
)

// Sum is the sum of xs.
func Sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}

// Percentile is the p-th percentile of d (nearest rank); 0 of none.
func Percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, (len(s)*p+99)/100-1)]
}

// Mean is the mean of d; 0 of none.
func Mean(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// MS is d in milliseconds, as the tables print it.
func MS(d time.Duration) string { return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)) }
