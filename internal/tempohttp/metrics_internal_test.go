package tempohttp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/readapi"
)

// TestMetricsRangeAligned: a range is widened to whole steps from the
// epoch; one whose whole steps run past what a time holds is 400, not an
// empty answer.
func TestMetricsRangeAligned(t *testing.T) {
	now := time.Unix(1_800_000_030, 0)
	for _, c := range []struct {
		query      string
		start, end time.Time
		code       int
	}{
		{"&start=1800000030&end=1800000090&step=60s", time.Unix(1_800_000_000, 0), time.Unix(1_800_000_120, 0), 0},
		{"&start=1800000000&end=1800000120&step=60s", time.Unix(1_800_000_000, 0), time.Unix(1_800_000_120, 0), 0},
		{"&start=1800000000&end=7258118400&step=5000000000s", time.Time{}, time.Time{}, http.StatusBadRequest},
	} {
		r := httptest.NewRequest("GET", "/api/metrics/query_range?q="+url.QueryEscape("{ } | rate()")+c.query, nil)
		_, rng, err := metricsParams(r, false, now)
		if c.code != 0 {
			var re *readapi.Error
			if !errors.As(err, &re) || re.Kind != readapi.KindBadRequest {
				t.Errorf("%s: %v, want a bad request", c.query, err)
			}
			continue
		}
		if err != nil || !rng.Start.Equal(c.start) || !rng.End.Equal(c.end) {
			t.Errorf("%s: %v to %v (%v), want %v to %v", c.query, rng.Start, rng.End, err, c.start, c.end)
		}
	}
}
