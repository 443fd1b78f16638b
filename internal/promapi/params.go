package promapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// minTime and maxTime are the earliest and latest times of Prometheus' API
// (the range of int64 milliseconds, less the seconds from year 1 to 1970).
var (
	minTime = time.Unix(math.MinInt64/1000+62135596801, 0).UTC()
	maxTime = time.Unix(math.MaxInt64/1000-62135596801, 999999999).UTC()
)

// parseTime reads time parameter name, def if it is not given, as
// parseTimeValue reads it; the error names the parameter, as Prometheus'
// parseTimeParam does.
func parseTime(r *http.Request, name string, def time.Time) (time.Time, error) {
	v := r.FormValue(name)
	if v == "" {
		return def, nil
	}
	t, err := parseTimeValue(v)
	if err != nil {
		return time.Time{}, fmt.Errorf("invalid time value for '%s': %w", name, err)
	}
	return t, nil
}

// parseTimeValue reads a time: Unix seconds (with a fraction, rounded to
// the millisecond) or RFC 3339, as Prometheus accepts; times beyond
// minTime and maxTime are those bounds (Prometheus overflows there), and
// NaN is refused (Prometheus makes a time of it).
func parseTimeValue(v string) (time.Time, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		switch {
		case math.IsNaN(f):
			return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", v)
		case f <= float64(minTime.Unix()):
			return minTime, nil
		case f >= float64(maxTime.Unix()):
			return maxTime, nil
		}
		sec, frac := math.Modf(f)
		return time.Unix(int64(sec), int64(math.Round(frac*1000))*int64(time.Millisecond)).UTC(), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	// time.Parse reads four-digit years only; clients (client_golang's
	// API among them) send Prometheus' bounds as these two strings.
	switch v {
	case minTime.Format(time.RFC3339Nano):
		return minTime, nil
	case maxTime.Format(time.RFC3339Nano):
		return maxTime, nil
	}
	return time.Time{}, fmt.Errorf("cannot parse %q to a valid timestamp", v)
}

// evalMin and evalMax bound the times PromQL can evaluate at: the engine
// computes in int64 nanoseconds (years 1677 to 2262). Beyond them it would
// answer for a wrapped-around time, so queries refuse them, while series
// and label windows take Prometheus' wider bounds.
var (
	evalMin = time.Unix(0, math.MinInt64).UTC()
	evalMax = time.Unix(0, math.MaxInt64).UTC()
)

// checkEvalTime refuses a query time outside evalMin..evalMax.
func checkEvalTime(name string, t time.Time) *apiError {
	if t.Before(evalMin) || t.After(evalMax) {
		return invalidParam(name, "time %s is outside the range PromQL evaluates, %s to %s",
			t.Format(time.RFC3339), evalMin.Format(time.RFC3339), evalMax.Format(time.RFC3339))
	}
	return nil
}

// requiredTime reads time parameter name, which must be given, as
// parseTimeValue reads it; as in Prometheus' query_range, the error does
// not repeat the parameter's name.
func requiredTime(r *http.Request, name string) (time.Time, error) {
	return parseTimeValue(r.FormValue(name))
}

// parseDuration reads a duration: seconds (with a fraction) or a
// Prometheus duration such as 5m or 1h30m.
func parseDuration(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		d := f * float64(time.Second)
		if math.IsNaN(d) || d >= math.MaxInt64 || d < math.MinInt64 {
			return 0, fmt.Errorf("cannot parse %q to a valid duration. It overflows int64", v)
		}
		return time.Duration(d), nil
	}
	d, err := model.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("cannot parse %q to a valid duration", v)
	}
	return time.Duration(d), nil
}

// withTimeout applies the request's timeout parameter to ctx.
func withTimeout(r *http.Request) (context.Context, context.CancelFunc, *apiError) {
	v := r.FormValue("timeout")
	if v == "" {
		return r.Context(), func() {}, nil
	}
	d, err := parseDuration(v)
	if err == nil && d <= 0 {
		err = fmt.Errorf("timeout must be positive, got %v", d)
	}
	if err != nil {
		return nil, nil, invalidParam("timeout", "%v", err)
	}
	ctx, cancel := context.WithTimeout(r.Context(), d)
	return ctx, cancel, nil
}

func parseLimit(r *http.Request) (int, *apiError) {
	v := r.FormValue("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err == nil && n < 0 {
		err = errors.New("limit must be non-negative")
	}
	if err != nil {
		return 0, invalidParam("limit", "%v", err)
	}
	return n, nil
}

// matchers reads and parses the match[] parameters, as matchSelectors and
// parseMatchers do.
func (a *API) matchers(r *http.Request, required bool) ([][]*labels.Matcher, *apiError) {
	raw, aerr := matchSelectors(r, required)
	if aerr != nil {
		return nil, aerr
	}
	return a.parseMatchers(raw, required)
}

// matchSelectors reads the match[] parameters, refusing none if required
// (for /api/v1/series).
func matchSelectors(r *http.Request, required bool) ([]string, *apiError) {
	if err := r.ParseForm(); err != nil {
		return nil, badData("error parsing form values: %v", err)
	}
	raw := r.Form["match[]"]
	if len(raw) == 0 && required {
		return nil, badData("no match[] parameter provided")
	}
	return raw, nil
}

// parseMatchers parses match[] selectors, refusing (as Prometheus does) a
// selector whose matchers all match the empty string. named is true for
// /api/v1/series only, which, as in Prometheus, names the parameter in its
// errors; the other endpoints give the bare error.
func (a *API) parseMatchers(raw []string, named bool) ([][]*labels.Matcher, *apiError) {
	if len(raw) == 0 {
		return nil, nil
	}
	sets, err := a.parser.ParseMetricSelectors(raw)
	if err == nil {
		for _, set := range sets {
			if !slices.ContainsFunc(set, func(m *labels.Matcher) bool { return !m.Matches("") }) {
				err = errors.New("match[] must contain at least one non-empty matcher")
				break
			}
		}
	}
	switch {
	case err == nil:
		return sets, nil
	case named:
		return nil, invalidParam("match[]", "%v", err)
	}
	return nil, badData("%v", err)
}

// hintLimit is the storage hint for a result cut to limit: one more, so
// that a cut can be told from an exact fit and warned about.
func hintLimit(limit int) int {
	if limit > 0 && limit < math.MaxInt {
		return limit + 1
	}
	return limit
}

// window reads start and end, defaulting to all time.
func window(r *http.Request) (int64, int64, *apiError) {
	start, err := parseTime(r, "start", time.UnixMilli(math.MinInt64/2))
	if err != nil {
		return 0, 0, invalidParam("start", "%v", err)
	}
	end, err := parseTime(r, "end", time.UnixMilli(math.MaxInt64/2))
	if err != nil {
		return 0, 0, invalidParam("end", "%v", err)
	}
	// As in Prometheus, an end before the start is not an error here: the
	// series and label endpoints find nothing in such a window.
	return start.UnixMilli(), end.UnixMilli(), nil
}
