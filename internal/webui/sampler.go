package webui

import (
	"context"
	"math"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// view is one thing the status page draws: a metric family summed over
// the labels it does not keep.
type view struct {
	name   string   // its key in the status JSON
	metric string   // the metric family
	by     []string // the labels kept; the others are summed
	rate   bool     // a counter: the JSON has its per-second rates
	top    int      // > 0: only the top series by recent rate, per value of by[0], get their history in the JSON
}

// views are the metric families the sampler keeps. A family that is not
// registered (no lake, no forwarding, no metric store) has no series. A
// view of a family whose series concern one tenant each keeps the tenant
// label, by which the status API shows a request its own (status.go).
var views = []view{
	{name: "accepted", metric: "wirehouse_receiver_accepted_records_total", by: []string{"signal"}, rate: true},
	{name: "refused", metric: "wirehouse_receiver_refused_records_total", by: []string{"signal", "reason"}, rate: true},
	{name: "services", metric: "wirehouse_sink_records_total", by: []string{"signal", "service", "tenant"}, rate: true, top: 8},
	{name: "inflight_bytes", metric: "wirehouse_receiver_inflight_bytes"},
	{name: "inflight_limit", metric: "wirehouse_receiver_inflight_bytes_limit"},
	{name: "spool_bytes", metric: "wirehouse_spool_bytes"},
	{name: "spool_segments", metric: "wirehouse_spool_segments"},
	{name: "spool_last_seq", metric: "wirehouse_spool_last_seq"},
	{name: "spool_full", metric: "wirehouse_spool_full_total", rate: true},
	{name: "lake_lag", metric: "wirehouse_lake_lag_records"},
	{name: "lake_committed", metric: "wirehouse_lake_committed_seq"},
	{name: "lake_rows", metric: "wirehouse_lake_rows_total", rate: true},
	{name: "lake_written_bytes", metric: "wirehouse_lake_bytes_total", rate: true},
	{name: "lake_bytes", metric: "wirehouse_lake_usage_bytes", by: []string{"signal", "tenant"}},
	{name: "lake_files", metric: "wirehouse_lake_usage_files", by: []string{"signal", "tenant"}},
	{name: "lake_refused", metric: "wirehouse_lake_refused_records_total", rate: true},
	{name: "head_series", metric: "prometheus_tsdb_head_series"},
	{name: "head_chunks", metric: "prometheus_tsdb_head_chunks"},
	{name: "head_samples", metric: "prometheus_tsdb_head_samples_appended_total", rate: true},
	{name: "metrics_rejected", metric: "wirehouse_metricstore_rejected_points_total", by: []string{"reason"}, rate: true},
	{name: "metrics_duplicates", metric: "wirehouse_metricstore_duplicate_points_total", rate: true},
	{name: "forward_queue", metric: "wirehouse_forward_queue_records", by: []string{"destination"}},
	{name: "forward_queue_bytes", metric: "wirehouse_forward_queue_bytes", by: []string{"destination"}},
	{name: "forward_age", metric: "wirehouse_forward_queue_age_seconds", by: []string{"destination"}},
	{name: "forward_members", metric: "wirehouse_forward_ring_members", by: []string{"destination"}},
	{name: "forward_records", metric: "wirehouse_forward_records_total", by: []string{"destination", "outcome"}, rate: true},
	{name: "quarantined", metric: "wirehouse_quarantined_records_total", by: []string{"signal"}, rate: true},
	{name: "memory", metric: "process_resident_memory_bytes"},
	{name: "cpu", metric: "process_cpu_seconds_total", rate: true},
	{name: "goroutines", metric: "go_goroutines"},
	{name: "process_start", metric: "process_start_time_seconds"},
}

// viewsByMetric indexes views by metric family.
var viewsByMetric = func() map[string][]int {
	m := map[string][]int{}
	for i, v := range views {
		m[v.metric] = append(m[v.metric], i)
	}
	return m
}()

// maxSamples bounds Window/Interval; maxTracks bounds the series kept
// (each holds Window/Interval floats): past it, new series are left out
// of the history (counted in the JSON's dropped_series).
const (
	maxSamples = 10_000
	maxTracks  = 5_000
)

// Sampler keeps the history of the views' series: every Interval, the
// Gatherer's values, in a ring of Window/Interval samples.
type Sampler struct {
	cfg  Config
	size int // samples kept

	mu      sync.Mutex
	times   []int64 // Unix ms of each sample, a ring; next is the oldest once full
	next    int     // where the next sample goes
	n       int     // samples held
	seq     uint64  // samples taken
	tracks  map[trackKey]*track
	dropped int
	lastErr string
}

// trackKey names a series: its view and its kept labels' values.
type trackKey struct {
	view   int
	labels string // the values, "\xff"-joined
}

// track is one series' values, a ring parallel to Sampler.times; NaN
// where the series was absent.
type track struct {
	labels []string // values of the view's by labels
	vals   []float64
	born   uint64 // the sample that first saw it
	seen   uint64 // the last sample that saw it
}

func newSampler(cfg Config) *Sampler {
	size := int(cfg.Window / cfg.Interval)
	return &Sampler{cfg: cfg, size: size, times: make([]int64, size), tracks: map[trackKey]*track{}}
}

// Run samples at once and then every Interval until ctx ends.
func (s *Sampler) Run(ctx context.Context) {
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		s.Sample()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sample takes one sample of the Gatherer. A failed Gather is logged
// (once until it succeeds again) and the families it returned are kept.
func (s *Sampler) Sample() {
	mfs, err := s.cfg.Gatherer.Gather()
	now := s.cfg.Now()
	type acc struct {
		labels []string
		sum    float64
	}
	sums := map[trackKey]*acc{}
	for _, mf := range mfs {
		for _, vi := range viewsByMetric[mf.GetName()] {
			v := views[vi]
			for _, m := range mf.GetMetric() {
				val, ok := value(m)
				if !ok {
					continue
				}
				lv := make([]string, len(v.by))
				for i, name := range v.by {
					lv[i] = labelValue(m, name)
				}
				k := trackKey{vi, strings.Join(lv, "\xff")}
				if a := sums[k]; a != nil {
					a.sum += val
				} else {
					sums[k] = &acc{lv, val}
				}
			}
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil && s.lastErr != err.Error() {
		s.cfg.Logger.Warn("status page: gathering metrics failed; keeping what was gathered", "err", err)
	}
	s.lastErr = ""
	if err != nil {
		s.lastErr = err.Error()
	}
	pos := s.next
	s.times[pos] = now.UnixMilli()
	for k, a := range sums {
		t := s.tracks[k]
		if t == nil {
			if len(s.tracks) >= maxTracks {
				s.dropped++
				continue
			}
			t = &track{labels: a.labels, vals: make([]float64, s.size), born: s.seq}
			for i := range t.vals {
				t.vals[i] = math.NaN()
			}
			s.tracks[k] = t
		}
		t.vals[pos], t.seen = a.sum, s.seq
	}
	for k, t := range s.tracks {
		if t.seen == s.seq {
			continue
		}
		t.vals[pos] = math.NaN()
		if s.seq-t.seen >= uint64(s.size) {
			delete(s.tracks, k) // gone for a whole window
		}
	}
	s.next = (pos + 1) % s.size
	s.n = min(s.n+1, s.size)
	s.seq++
}

// value is a counter's, gauge's or untyped metric's value.
func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue(), true
	case m.Gauge != nil:
		return m.Gauge.GetValue(), true
	case m.Untyped != nil:
		return m.Untyped.GetValue(), true
	}
	return 0, false
}

// labelValue is the value of m's label name, "" if it has none.
func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// history is a copy of the sampler's ring in time order.
type history struct {
	times   []int64 // Unix ms, oldest first
	series  map[trackKey]seriesHistory
	dropped int
}

type seriesHistory struct {
	labels []string
	vals   []float64 // parallel to times
	// born is the index of the sample that first saw the series, when
	// that was in the window but not the sampler's first sample (-1
	// else): a counter there was just created, its first value counts
	// from 0.
	born int
}

// snapshot copies the ring.
func (s *Sampler) snapshot() history {
	s.mu.Lock()
	defer s.mu.Unlock()
	start := (s.next - s.n + s.size) % s.size
	h := history{times: make([]int64, s.n), series: make(map[trackKey]seriesHistory, len(s.tracks)), dropped: s.dropped}
	for i := range s.n {
		h.times[i] = s.times[(start+i)%s.size]
	}
	firstSeq := s.seq - uint64(s.n)
	for k, t := range s.tracks {
		vals := make([]float64, s.n)
		for i := range s.n {
			vals[i] = t.vals[(start+i)%s.size]
		}
		born := -1
		if t.born > 0 && t.born >= firstSeq {
			born = int(t.born - firstSeq)
		}
		h.series[k] = seriesHistory{labels: t.labels, vals: vals, born: born}
	}
	return h
}
