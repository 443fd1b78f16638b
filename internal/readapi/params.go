package readapi

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"time"
)

// ParseTraceID reads a trace id as Jaeger and Tempo take one: 1 to 32 hex
// digits (either case), the missing leading ones zeros.
func ParseTraceID(s string) ([16]byte, error) {
	var id [16]byte
	if len(s) == 0 || len(s) > 32 {
		return id, fmt.Errorf("trace id %q: want 1 to 32 hex digits", s)
	}
	var buf [32]byte
	pad := 32 - len(s)
	for i := range pad {
		buf[i] = '0'
	}
	copy(buf[pad:], s)
	if _, err := hex.Decode(id[:], buf[:]); err != nil {
		return [16]byte{}, fmt.Errorf("trace id %q: not hex", s)
	}
	return id, nil
}

// ParseEpoch reads an integer count of unit (time.Second, Millisecond,
// Microsecond, Nanosecond) since the Unix epoch, as Tempo (seconds) and
// Jaeger (microseconds) take their times.
func ParseEpoch(s string, unit time.Duration) (time.Time, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("parse time %q: %w", s, err)
	}
	if unit <= 0 || n > math.MaxInt64/int64(unit) || n < math.MinInt64/int64(unit) {
		return time.Time{}, fmt.Errorf("parse time %q: out of range", s)
	}
	return time.Unix(0, n*int64(unit)).UTC(), nil
}

// ParseLokiTime reads a time as Loki's API takes them: RFC 3339, Unix
// seconds with a fraction, or an integer: nanoseconds, or seconds when
// small enough to be seconds.
func ParseLokiTime(s string) (time.Time, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 1e12 && n > -1e12 {
			return time.Unix(n, 0).UTC(), nil
		}
		return time.Unix(0, n).UTC(), nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time %q: want RFC 3339, Unix seconds or nanoseconds", s)
	}
	return t, nil
}
