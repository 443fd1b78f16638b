package receiver

import (
	"github.com/wirehouse/wirehouse/otlpwire"
)

// rejectedField is the JSON name of the partial success's rejected_*
// field of sig's export response.
func rejectedField(sig otlpwire.Signal) string {
	switch sig {
	case otlpwire.SignalMetrics:
		return "rejectedDataPoints"
	case otlpwire.SignalTraces:
		return "rejectedSpans"
	}
	return "rejectedLogRecords"
}
