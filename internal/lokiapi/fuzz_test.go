package lokiapi

import (
	"testing"
	"time"
)

// FuzzParams: the time and step parameters parse or fail, never panic.
// (The pipeline's fuzz target is internal/logql/eval's FuzzPipeline.)
func FuzzParams(f *testing.F) {
	f.Add("1780308000", "15s")
	f.Add("2026-06-01T10:00:00.5Z", "0.5")
	f.Add("1780308000123456789", "1h30m")
	f.Fuzz(func(t *testing.T, ts, step string) {
		parseTime(ts, zeroTime) //nolint:errcheck
		parseStep(step)         //nolint:errcheck
	})
}

var zeroTime time.Time
