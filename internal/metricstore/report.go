package metricstore

import (
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/model/labels"
)

// reasons are the Reason constants, for the counters' labels.
var reasons = []string{
	ReasonTemporality, ReasonOutOfOrder, ReasonDuplicate, ReasonTooOld, ReasonOutOfBounds,
	ReasonLabelLimit, ReasonInvalidUTF8, ReasonInvalidName, ReasonHistogramBuckets,
	ReasonInvalidHistogram, ReasonAppend, ReasonTooFarAhead, ReasonSeriesLimit,
}

// report counts the points AppendOTLP rejected, by reason, and the
// duplicate points it accepted without storing them again, in
// wirehouse_metricstore_rejected_points_total and
// wirehouse_metricstore_duplicate_points_total, and logs the rejections:
// a warning per reason at most every logEvery, with an example series
// and the points rejected for that reason since the last line.
type report struct {
	rejected   *prometheus.CounterVec
	byReason   map[string]prometheus.Counter
	duplicates prometheus.Counter
	log        *slog.Logger
	every      time.Duration
	now        func() time.Time

	mu         sync.Mutex
	logged     map[string]time.Time // reason → time of its last line
	suppressed map[string]int64     // reason → points rejected since its last line, not logged
}

// logEvery is how often a reason's rejections are logged at most.
const logEvery = 10 * time.Second

func newReport(log *slog.Logger, now func() time.Time) *report {
	r := &report{
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "wirehouse_metricstore_rejected_points_total",
			Help: "OTLP data points (answered in the partial success), and samples of remote write and of the rules, the metric store rejected, by reason.",
		}, []string{"reason"}),
		byReason: make(map[string]prometheus.Counter, len(reasons)),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "wirehouse_metricstore_duplicate_points_total",
			Help: "OTLP data points the metric store accepted without storing them again: each of their samples had the same time (ms) and value as one an earlier point of the same request stored.",
		}),
		log:        log,
		every:      logEvery,
		now:        now,
		logged:     make(map[string]time.Time),
		suppressed: make(map[string]int64),
	}
	for _, k := range reasons {
		r.byReason[k] = r.rejected.WithLabelValues(k)
	}
	return r
}

// collectors returns the metrics to register.
func (r *report) collectors() []prometheus.Collector {
	return []prometheus.Collector{r.rejected, r.duplicates}
}

// observe counts and logs what res, a committed request of tenant,
// rejected and left out as duplicates.
func (r *report) observe(tenant string, res *Result) {
	if res.Duplicates > 0 {
		r.duplicates.Add(float64(res.Duplicates))
	}
	if res.Rejected == 0 {
		return
	}
	for k, n := range res.Reasons {
		c, ok := r.byReason[k]
		if !ok {
			c = r.rejected.WithLabelValues(k)
		}
		c.Add(float64(n))
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(res.Reasons)) {
		n := res.Reasons[k]
		suppressed, ok := r.due(k, n, now)
		if !ok {
			continue
		}
		attrs := []any{"reason", k, "points", n, "example", res.Examples[k],
			"not_logged_since_last", suppressed, "request_points", res.Accepted + res.Rejected}
		if tenant != "" {
			attrs = append(attrs, "tenant", tenant)
		}
		r.log.Warn(fmt.Sprintf("metricstore: rejected data points (partial success); at most one line per reason every %v", r.every), attrs...)
	}
}

// due reports whether a line of key is due at now, and if so returns
// what was left unlogged since the last one and starts the next period;
// if not, it adds n to what is left. r.mu is held.
func (r *report) due(key string, n int64, now time.Time) (suppressed int64, ok bool) {
	if last, seen := r.logged[key]; seen && now.Sub(last) < r.every {
		r.suppressed[key] += n
		return 0, false
	}
	suppressed = r.suppressed[key]
	r.logged[key], r.suppressed[key] = now, 0
	return suppressed, true
}

// refuse counts and logs a sample of tenant an appender of Appendable
// (remote write, the rules' results) refused for reason, of series ls
// (stored labels), at most one line per reason every logEvery, apart from
// observe's lines.
func (r *report) refuse(tenant, reason string, ls labels.Labels) {
	r.byReason[reason].Add(1)
	r.mu.Lock()
	defer r.mu.Unlock()
	suppressed, ok := r.due("appender "+reason, 1, r.now())
	if !ok {
		return
	}
	attrs := []any{"reason", reason, "example", ls.String(), "not_logged_since_last", suppressed}
	if tenant != "" {
		attrs = append(attrs, "tenant", tenant)
	}
	r.log.Warn(fmt.Sprintf("metricstore: refused samples of remote write or rules; at most one line per reason every %v", r.every), attrs...)
}
