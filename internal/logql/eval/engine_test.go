package eval_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
)

// memSource is a Source of records in memory, honouring a Scan's time
// range, service filter, line strings and order.
type memSource []eval.Record

func (m memSource) Logs(ctx context.Context, tenant string, s eval.Scan, fn func(*eval.Record) bool) error {
	recs := slices.Clone(m)
	if s.Newest || s.Oldest {
		slices.SortStableFunc(recs, func(a, b eval.Record) int {
			if s.Newest {
				return cmp.Compare(b.Time, a.Time)
			}
			return cmp.Compare(a.Time, b.Time)
		})
	}
	for i := range recs {
		r := &recs[i]
		if r.Time < s.Start.UnixNano() || r.Time >= s.End.UnixNano() || s.Service != nil && !s.Service(r.Service) ||
			slices.ContainsFunc(s.Contains, func(c []byte) bool { return !bytes.Contains(r.Line, c) }) {
			continue
		}
		if !fn(r) {
			return nil
		}
	}
	return ctx.Err()
}

func (m memSource) LogStreams(_ context.Context, _ string, start, end time.Time) ([]eval.Record, error) {
	var out []eval.Record
	for _, r := range m {
		if r.Time >= start.UnixNano() && r.Time < end.UnixNano() {
			out = append(out, eval.Record{Service: r.Service, Resource: r.Resource})
		}
	}
	return out, nil
}

var t0 = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

// records are 60 records a second apart from t0 of two services, the
// api's in namespace shop, with a logfmt line and a severity.
func records() memSource {
	var out memSource
	for i := range 60 {
		svc, ns := "api", "shop"
		if i%3 == 0 {
			svc, ns = "db", "data"
		}
		out = append(out, eval.Record{
			Time:           t0.Add(time.Duration(i) * time.Second).UnixNano(),
			Line:           fmt.Appendf(nil, "msg=done status=%d took=%dms", 200+100*(i%4), i),
			Service:        svc,
			Resource:       []eval.KV{{"service.name", svc}, {"k8s.namespace.name", ns}, {"host.name", "h1"}},
			SeverityText:   []string{"INFO", "WARN", "ERROR"}[i%3],
			SeverityNumber: []int32{9, 13, 17}[i%3],
			Attrs:          []eval.KV{{"http.route", "/r" + fmt.Sprint(i%2)}},
		})
	}
	return out
}

func exec(t *testing.T, e *eval.Engine, q eval.Query, text string) eval.Result {
	t.Helper()
	x, err := logql.Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	q.Expr = x
	res, err := e.Exec(context.Background(), q)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return res
}

// TestLogQuery: a log query gives the newest (or oldest) lines up to the
// limit of the records its selector and pipeline keep, grouped by their
// labels, with OTLP attributes as Loki's labels and metadata.
func TestLogQuery(t *testing.T) {
	e := eval.NewEngine(eval.Config{Source: records(), MaxSeries: 100, MaxPoints: 100})
	q := eval.Query{Start: t0, End: t0.Add(time.Minute), Limit: 5}
	res := exec(t, e, q, `{service_name="api", k8s_namespace_name="shop"} |= "status=500" | logfmt | took > 10`)
	if res.Type != "streams" || res.Stats.Returned != 5 || res.Stats.Lines == 0 {
		t.Fatalf("%+v", res)
	}
	var times []int64
	for _, s := range res.Streams {
		for _, l := range []string{"service_name", "detected_level", "http_route", "status", "took", "host_name"} {
			if _, ok := s.Labels.Get(l); !ok {
				t.Errorf("stream %v lacks %s", s.Labels, l)
			}
		}
		for _, en := range s.Entries {
			if !strings.Contains(en.Line, "status=500") {
				t.Errorf("line %q", en.Line)
			}
			times = append(times, en.Time)
		}
	}
	// status=500 is i%4 == 3, api is i%3 != 0, took > 10: the newest 5.
	var want []int64
	for i := 59; i > 10 && len(want) < 5; i-- {
		if i%4 == 3 && i%3 != 0 {
			want = append(want, t0.Add(time.Duration(i)*time.Second).UnixNano())
		}
	}
	slices.Sort(times)
	slices.Sort(want)
	if !slices.Equal(times, want) {
		t.Errorf("times %v, want %v", times, want)
	}
	q.Forward, q.Limit = true, 2
	res = exec(t, e, q, `{level="error"} | line_format "{{.severity_text}} {{.__line__}}"`)
	var lines []eval.Entry
	for _, s := range res.Streams {
		lines = append(lines, s.Entries...)
	}
	slices.SortFunc(lines, func(a, b eval.Entry) int { return cmp.Compare(a.Time, b.Time) })
	// ERROR is i%3 == 2: the oldest two are 2 and 5.
	if len(lines) != 2 || lines[0].Time != t0.Add(2*time.Second).UnixNano() || lines[1].Time != t0.Add(5*time.Second).UnixNano() ||
		lines[0].Line != "ERROR msg=done status=400 took=2ms" {
		t.Errorf("forward: %+v", res.Streams)
	}
}

// TestMetricQuery: range aggregations at each step, summed by a label,
// and vector aggregations and binary operations over them.
func TestMetricQuery(t *testing.T) {
	e := eval.NewEngine(eval.Config{Source: records(), MaxSeries: 100, MaxPoints: 100})
	q := eval.Query{Start: t0.Add(30 * time.Second), End: t0.Add(90 * time.Second), Step: 30 * time.Second}
	res := exec(t, e, q, `sum by (service_name) (count_over_time({service_name=~".+"}[30s]))`)
	if res.Type != "matrix" || len(res.Series) != 2 {
		t.Fatalf("%+v", res)
	}
	// (t-30s, t]: at 30s records 1..30, at 60s 31..59, at 90s none;
	// db's are i%3 == 0.
	want := map[string][]eval.Point{
		"api": {{t0.Add(30 * time.Second).UnixMilli(), 20}, {t0.Add(time.Minute).UnixMilli(), 20}},
		"db":  {{t0.Add(30 * time.Second).UnixMilli(), 10}, {t0.Add(time.Minute).UnixMilli(), 9}},
	}
	for _, s := range res.Series {
		svc, _ := s.Labels.Get("service_name")
		if !slices.Equal(s.Points, want[svc]) {
			t.Errorf("%s: %v, want %v", svc, s.Points, want[svc])
		}
	}
	inst := eval.Query{Start: t0.Add(time.Minute), End: t0.Add(time.Minute), Instant: true}
	// (0, 60s]: records 1..59.
	var dbBytes, dbLines float64
	for i, r := range records() {
		if i > 0 && r.Service == "db" {
			dbBytes, dbLines = dbBytes+float64(len(r.Line)), dbLines+1
		}
	}
	for text, want := range map[string]float64{
		`sum(count_over_time({service_name=~".+"}[1m]))`:                                                59,
		`max(max_over_time({service_name="api"} | logfmt | unwrap duration(took) [1m]))`:                0.059,
		`sum(bytes_over_time({service_name="db"}[1m])) / sum(count_over_time({service_name="db"}[1m]))`: dbBytes / dbLines,
		// status=200 is i%4 == 0: 4 INFO, 5 WARN, 5 ERROR.
		`topk(1, sum by (severity_text) (count_over_time({service_name=~".+"} |= "status=200" [1m])))`: 5,
	} {
		res := exec(t, e, inst, text)
		if res.Type != "vector" || len(res.Series) != 1 || res.Series[0].Points[0].V != want {
			t.Errorf("%s: %+v, want %v", text, res.Series, want)
		}
	}
	if res := exec(t, e, inst, `2 * 21`); res.Type != "scalar" || res.Scalar.V != 42 {
		t.Errorf("scalar: %+v", res)
	}
}

// TestLimits: a range query of more steps than MaxPoints, or a metric of
// more series than MaxSeries, fails with ErrLimit; the budget's error
// stops a query.
func TestLimits(t *testing.T) {
	e := eval.NewEngine(eval.Config{Source: records(), MaxSeries: 2, MaxPoints: 10})
	for text, q := range map[string]eval.Query{
		`count_over_time({service_name=~".+"}[1m])`:                           {Start: t0, End: t0.Add(time.Minute), Step: time.Second},
		`sum by (took) (count_over_time({service_name=~".+"} | logfmt [1m]))`: {Start: t0.Add(time.Minute), End: t0.Add(time.Minute), Instant: true},
	} {
		q.Expr, _ = logql.Parse(text)
		if _, err := e.Exec(context.Background(), q); !errors.Is(err, eval.ErrLimit) {
			t.Errorf("%s: %v, want ErrLimit", text, err)
		}
	}
	full := errors.New("budget spent")
	e = eval.NewEngine(eval.Config{Source: records(), MaxSeries: 100, MaxPoints: 100,
		Budget: func(context.Context) eval.Budget { return spent{full} }})
	q := eval.Query{Start: t0, End: t0.Add(time.Minute), Limit: 10}
	q.Expr, _ = logql.Parse(`{service_name="api"}`)
	if _, err := e.Exec(context.Background(), q); !errors.Is(err, full) {
		t.Errorf("a spent budget: %v", err)
	}
}

type spent struct{ err error }

func (s spent) Charge(int64) error { return s.err }

// TestStreamsAndIndexStats: the label endpoints' streams and a
// selector's index statistics.
func TestStreamsAndIndexStats(t *testing.T) {
	e := eval.NewEngine(eval.Config{Source: records(), MaxSeries: 100, MaxPoints: 100})
	all, err := e.Streams(context.Background(), "t", t0, t0.Add(time.Minute), nil)
	if err != nil || len(all) != 2 {
		t.Fatalf("streams %v, %v", all, err)
	}
	sel, err := e.Streams(context.Background(), "t", t0, t0.Add(time.Minute), [][]logql.Matcher{{{Name: "k8s_namespace_name", Op: logql.MatchEqual, Value: "data"}}})
	if err != nil || len(sel) != 1 || sel[0].Map()["service_name"] != "db" {
		t.Errorf("selected streams %v, %v", sel, err)
	}
	q := eval.Query{Start: t0, End: t0.Add(time.Minute), Tenant: "t"}
	q.Expr, _ = logql.Parse(`{service_name="db"}`)
	st, err := e.IndexStats(context.Background(), q)
	if err != nil || st.Streams != 1 || st.Entries != 20 || st.Bytes == 0 {
		t.Errorf("index stats %+v, %v", st, err)
	}
}
