package webui

import (
	"cmp"
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/internal/buildinfo"
	"github.com/wirehouse/wirehouse/internal/readapi"
)

// Status is the answer of GET /api/wirehouse/status: the sampler's
// history of the views, as the status page draws it.
type Status struct {
	Now      int64   `json:"now"`      // Unix ms of the newest sample
	Interval float64 `json:"interval"` // seconds between samples
	Window   float64 `json:"window"`   // seconds of history kept
	Times    []int64 `json:"times"`    // Unix ms of each sample, oldest first
	// Views holds each view's series (views in sampler.go): Values are
	// parallel to Times, per-second rates for counters (the first point,
	// and any after a gap, null), values for gauges.
	Views map[string][]Series `json:"views"`
	// SpoolAge is how long ago the oldest spooled record that is not in
	// the lake yet was received, to within a sample (at most Seconds ago,
	// or at least when AtLeast); nil without a lake loader.
	SpoolAge *Age `json:"spool_age"`
	Build    struct {
		Version   string `json:"version"`
		Revision  string `json:"revision"`
		GoVersion string `json:"go_version"`
		Platform  string `json:"platform"`
	} `json:"build"`
	// Settings are Config.Settings', and, when Tenant is "", the
	// default tenant's name.
	Settings []Setting `json:"settings"`
	// Tenant is the tenant whose series a tenant-labelled view shows
	// (services, lake files); "" when it shows every tenant's.
	Tenant string `json:"tenant"`
	// DroppedSeries counts series left out of the history past its
	// bound of 5,000.
	DroppedSeries int `json:"dropped_series"`
}

// Series is one series of a view.
type Series struct {
	Labels map[string]string `json:"labels"`
	// Values is nil for the series of a view with a top past its top.
	Values Floats `json:"values,omitempty"`
	Last   Float  `json:"last"` // the newest value as gathered (a counter's total); null if absent
	// Rate is a counter's per-second rate over the last minute (or what
	// the window holds of it); null for a gauge or without two samples.
	Rate Float `json:"rate"`
}

// Age is a duration in seconds; AtLeast when it began before the window.
type Age struct {
	Seconds float64 `json:"seconds"`
	AtLeast bool    `json:"at_least"`
}

// Float is a float64 whose NaN is JSON's null.
type Float float64

// MarshalJSON writes f, or null for NaN and the infinities.
func (f Float) MarshalJSON() ([]byte, error) { return appendFloat(nil, float64(f)), nil }

// UnmarshalJSON reads a number or null (NaN).
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = Float(v)
	return err
}

// Floats are float64s whose NaNs are JSON's nulls.
type Floats []float64

// MarshalJSON writes the array, NaN as null.
func (fs Floats) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, 8*len(fs)+2)
	b = append(b, '[')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendFloat(b, f)
	}
	return append(b, ']'), nil
}

// UnmarshalJSON reads an array of numbers and nulls (NaN).
func (fs *Floats) UnmarshalJSON(b []byte) error {
	var ps []*float64
	if err := json.Unmarshal(b, &ps); err != nil {
		return err
	}
	*fs = make(Floats, len(ps))
	for i, p := range ps {
		(*fs)[i] = math.NaN()
		if p != nil {
			(*fs)[i] = *p
		}
	}
	return nil
}

func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, 64)
}

// round6 rounds f to 6 significant digits, which is all a rate on a chart
// needs, and keeps its JSON short.
func round6(f float64) float64 {
	if f == 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return f
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(f, 'g', 6, 64), 64)
	return r
}

// rateWindow is what Series.Rate averages over.
const rateWindow = 60_000 // ms

// statusAPI serves GET /api/wirehouse/status: status, run by
// readapi.Handle with the request's tenant in its context (its bearer
// token's, else Config.Tenant; no header names one), answered as JSON
// (jsonWire).
func (h *Handler) statusAPI() http.Handler {
	return readapi.Handle(jsonWire{log: h.cfg.Logger}, &readapi.TenantRule{Default: h.cfg.Tenant}, h.status)
}

// status answers GET /api/wirehouse/status: a request restricted to a
// tenant (Config.Restrict) sees no other tenant's series, nor its name.
func (h *Handler) status(r *http.Request) (Status, error) {
	tenant := h.tenantOf(r)
	st := h.sampler.status(tenant)
	if h.cfg.Settings != nil {
		st.Settings = h.cfg.Settings()
		if tenant == "" {
			st.Settings = append(st.Settings, Setting{Name: "Default tenant", Value: h.cfg.Tenant})
		}
	}
	b := buildinfo.Get()
	st.Build.Version, st.Build.Revision, st.Build.GoVersion, st.Build.Platform = b.Version, b.Revision, b.GoVersion, b.Platform
	return st, nil
}

// jsonWire is the status API's wire format (readapi.Wire): its answer as
// JSON, never cached; an error as {"error": message}, which the pages
// show, with the status of its kind.
type jsonWire struct {
	log *slog.Logger // gets a line per internal error
}

// Write writes st as JSON.
func (x jsonWire) Write(w http.ResponseWriter, _ *http.Request, st Status) {
	x.writeJSON(w, http.StatusOK, st)
}

// WriteError writes err with the HTTP status of its kind
// (readapi.Classify); an internal error (a panic: status returns none) is
// logged, and its answer says so without its stack.
func (x jsonWire) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	k := readapi.Classify(err)
	msg := err.Error()
	if k == readapi.KindInternal {
		x.log.Error("status page: request failed", "path", r.URL.Path, "err", err)
		msg = "internal error: see the server's log"
	}
	x.writeJSON(w, k.HTTPStatus(), struct {
		Error string `json:"error"`
	}{msg})
}

func (x jsonWire) writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		x.log.Debug("status page: write response", "err", err)
	}
}

// status builds the Status of tenant's view ("" for every tenant): of a
// view keeping the tenant label, the series of tenant alone, those
// without the label counting as the default tenant's (Config.Tenant).
func (s *Sampler) status(tenant string) Status {
	hist := s.snapshot()
	st := Status{
		Interval: s.cfg.Interval.Seconds(), Window: s.cfg.Window.Seconds(),
		Times: hist.times, Views: map[string][]Series{}, Tenant: tenant, DroppedSeries: hist.dropped,
	}
	if len(hist.times) > 0 {
		st.Now = hist.times[len(hist.times)-1]
	}
	for k, sh := range hist.series {
		v := views[k.view]
		labels := make(map[string]string, len(v.by))
		for i, name := range v.by {
			labels[name] = sh.labels[i]
		}
		if t, ok := labels["tenant"]; ok {
			if t == "" {
				t = s.cfg.Tenant
				labels["tenant"] = t
			}
			if tenant != "" && t != tenant {
				continue
			}
		}
		out := Series{Labels: labels, Values: sh.vals, Last: Float(last(sh.vals)), Rate: Float(math.NaN())}
		if v.rate {
			out.Values = rates(hist.times, sh.vals, sh.born)
			out.Rate = Float(recentRate(hist.times, out.Values))
		}
		st.Views[v.name] = append(st.Views[v.name], out)
	}
	for _, v := range views {
		ss := st.Views[v.name]
		slices.SortFunc(ss, func(a, b Series) int {
			for _, name := range v.by {
				if c := strings.Compare(a.Labels[name], b.Labels[name]); c != 0 {
					return c
				}
			}
			return 0
		})
		if v.top > 0 {
			keepTop(ss, v.by[0], v.top)
		}
	}
	if ss, ok := st.Views["lake_committed"]; ok {
		st.SpoolAge = spoolAge(hist.times, st.Views["spool_last_seq"], ss)
	}
	return st
}

// last is the newest value of vals, NaN if it is absent.
func last(vals []float64) float64 {
	if len(vals) == 0 {
		return math.NaN()
	}
	return vals[len(vals)-1]
}

// rates turns a counter's samples into per-second rates: point i is the
// increase since point i-1 over their time apart (after a reset, the
// whole value); NaN where either is absent, but at born, where the
// counter was just created and its value is all increase.
func rates(times []int64, vals []float64, born int) Floats {
	out := make(Floats, len(vals))
	for i, v := range vals {
		out[i] = math.NaN()
		if i == 0 || math.IsNaN(v) {
			continue
		}
		prev := vals[i-1]
		if math.IsNaN(prev) {
			if i != born {
				continue
			}
			prev = 0
		}
		dt := float64(times[i]-times[i-1]) / 1e3
		if dt <= 0 {
			continue
		}
		inc := v - prev
		if inc < 0 {
			inc = v
		}
		out[i] = round6(inc / dt)
	}
	return out
}

// recentRate averages rates over the points of the last rateWindow,
// weighted by the time each covers.
func recentRate(times []int64, rates Floats) float64 {
	if len(times) == 0 {
		return math.NaN()
	}
	var sum, span float64
	from := times[len(times)-1] - rateWindow
	for i := len(times) - 1; i > 0 && times[i-1] >= from; i-- {
		if math.IsNaN(rates[i]) {
			continue
		}
		dt := float64(times[i]-times[i-1]) / 1e3
		sum += rates[i] * dt
		span += dt
	}
	if span == 0 {
		return math.NaN()
	}
	return round6(sum / span)
}

// keepTop leaves the Values of the top n series by Rate, per value of
// label, and drops the others'.
func keepTop(ss []Series, label string, n int) {
	byGroup := map[string][]int{}
	for i, s := range ss {
		byGroup[s.Labels[label]] = append(byGroup[s.Labels[label]], i)
	}
	for _, idx := range byGroup {
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Compare(nanToZero(float64(ss[b].Rate)), nanToZero(float64(ss[a].Rate)))
		})
		for _, i := range idx[min(n, len(idx)):] {
			ss[i].Values = nil
		}
	}
}

func nanToZero(f float64) float64 {
	if math.IsNaN(f) {
		return 0
	}
	return f
}

// spoolAge is how long ago the oldest spool record the lake loader has
// not committed was received: after the last sample whose spool_last_seq
// had not passed the committed sequence number, so at most that long ago
// (or at least as long ago as the window's first sample, when every
// sample had passed it). Nil without both series.
func spoolAge(times []int64, lastSeq, committed []Series) *Age {
	if len(lastSeq) != 1 || len(committed) != 1 || len(times) == 0 {
		return nil
	}
	newest := times[len(times)-1]
	done := float64(committed[0].Last)
	if math.IsNaN(done) || math.IsNaN(float64(lastSeq[0].Last)) || float64(lastSeq[0].Last) <= done {
		return &Age{}
	}
	vals := lastSeq[0].Values
	for i, v := range vals {
		if math.IsNaN(v) || v <= done {
			continue
		}
		if i == 0 {
			return &Age{Seconds: float64(newest-times[0]) / 1e3, AtLeast: true}
		}
		return &Age{Seconds: float64(newest-times[i-1]) / 1e3}
	}
	return &Age{}
}
