package lokiapi

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// recordsOnly is the lake as a source without eval.Counter: every query
// decodes records.
type recordsOnly struct{ s lakeSource }

func (r recordsOnly) Logs(ctx context.Context, tenant string, s eval.Scan, fn func(*eval.Record) bool) error {
	return r.s.Logs(ctx, tenant, s, fn)
}

func (r recordsOnly) LogStreams(ctx context.Context, tenant string, start, end time.Time) ([]eval.Record, error) {
	return r.s.LogStreams(ctx, tenant, start, end)
}

// countingSource is the lake as a source that counts its CountLogs calls.
type countingSource struct {
	lakeSource
	calls *int
}

func (c countingSource) CountLogs(ctx context.Context, tenant string, s eval.Scan, bucket func(int64) int64, fn func(*eval.Record, int64, int64, int64) bool) error {
	*c.calls++
	return c.lakeSource.CountLogs(ctx, tenant, s, bucket, fn)
}

// TestCountsAsRecords: the count queries the lake answers from its
// columns (lakeread.CountLogs, through eval.Counter) give the answer the
// same queries give over decoded records, on steps and ranges that do
// not divide each other, with an offset, line filters, instant queries
// and every grouping the count path takes; the counts come from both the
// lake's files and records not in files yet.
func TestCountsAsRecords(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	r := lakeWithFresh(t, start, 40, 8, 2, 9*time.Minute)
	calls := 0
	counted := eval.NewEngine(eval.Config{Source: countingSource{lakeSource{r: r}, &calls}, MaxSeries: 10_000, MaxPoints: 11_000})
	decoded := eval.NewEngine(eval.Config{Source: recordsOnly{lakeSource{r: r}}, MaxSeries: 10_000, MaxPoints: 11_000})
	from, to := start.Add(3*time.Minute), start.Add(80*time.Minute)
	var svc string
	streams, err := r.LogStreams(context.Background(), "default", from, to)
	if err != nil || len(streams) == 0 {
		t.Fatalf("streams %v, %v", streams, err)
	}
	// A stream of the files' listing may hold no record in [from, to]
	// (streams are listed a file at a time): take the first service, in
	// name order, that the decoded path counts records of.
	sort.Slice(streams, func(i, j int) bool { return streams[i].Service < streams[j].Service })
	for _, s := range streams {
		expr, err := logql.Parse(`sum(count_over_time({service_name="` + s.Service + `"}[1m]))`)
		if err != nil {
			t.Fatal(err)
		}
		res, err := decoded.Exec(context.Background(), eval.Query{Expr: expr, Tenant: "default", Start: from, End: to, Step: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Series) > 0 {
			svc = s.Service
			break
		}
	}
	if svc == "" {
		t.Fatal("no service has records in the range")
	}
	queries := []string{
		`sum by (severity_text) (count_over_time({service_name="` + svc + `"}[1m]))`,
		`sum by (service_name) (count_over_time({service_name=~".+"}[2m]))`,
		`sum by (detected_level) (count_over_time({service_name=~".+"}[45s]))`,
		`sum by (service_name, severity_number) (rate({service_name=~".+"} |= "e" [5m]))`,
		`sum(count_over_time({service_name=~".+"} |= "a" |= "e" [3m] offset 2m))`,
		`sum by (severity_text) (count_over_time({service_name!="` + svc + `"}[7m]))`,
		`sum by (service_name) (count_over_time({service_name=~".+"}[20m]))`,
	}
	for _, q := range queries {
		expr, err := logql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		points := 0
		for _, step := range []time.Duration{time.Minute, 45 * time.Second, 2 * time.Minute} {
			for _, instant := range []bool{false, true} {
				eq := eval.Query{Expr: expr, Tenant: "default", Start: from, End: to, Step: step, Instant: instant}
				if instant {
					eq.Start = start.Add(30 * time.Minute)
					eq.End = eq.Start
				}
				before := calls
				a, err := counted.Exec(context.Background(), eq)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				if calls == before {
					t.Fatalf("%s: not answered from counts", q)
				}
				b, err := decoded.Exec(context.Background(), eq)
				if err != nil {
					t.Fatalf("%s: %v", q, err)
				}
				ga, gb := seriesText(a), seriesText(b)
				for _, s := range b.Series {
					points += len(s.Points)
				}
				if !reflect.DeepEqual(ga, gb) {
					t.Errorf("%s step %v instant %v:\ncounted %v\ndecoded %v", q, step, instant, ga, gb)
				}
				if a.Stats.Lines != b.Stats.Lines {
					t.Errorf("%s: counted %d lines read, decoded %d", q, a.Stats.Lines, b.Stats.Lines)
				}
			}
		}
		if points == 0 {
			t.Errorf("%s: no point in any answer: the test compares nothing", q)
		}
	}
}

// lakeWithFresh returns a reader of n requests of synth's logs (400
// records each, seeds from seed, the i-th starting at start+i*every): the
// last fresh ones are the spool's (not in files yet), the others in a
// lake's files.
func lakeWithFresh(t *testing.T, start time.Time, seed, n, fresh int, every time.Duration) *lakeread.Reader {
	t.Helper()
	dir := t.TempDir()
	wcfg := lake.DefaultWriterConfig()
	wcfg.Dir = dir
	w, err := lake.NewWriter(wcfg)
	if err != nil {
		t.Fatal(err)
	}
	var spool [][]byte
	for i := range n {
		body := synth.Logs(synth.Config{Seed: int64(seed + i), Resources: 3, ScopesPerResource: 2, TotalRecords: 400, Start: start.Add(time.Duration(i) * every)})
		if i >= n-fresh {
			spool = append(spool, body)
			continue
		}
		if _, err := w.Append(otlpwire.SignalLogs, "default", body); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rcfg := lakeread.DefaultConfig()
	rcfg.Bucket = bucket.NewLocal(dir)
	rcfg.Fresh = freshBodies(spool)
	r, err := lakeread.New(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// seriesText is a result's series as sorted text.
func seriesText(r eval.Result) []string {
	var out []string
	for _, s := range r.Series {
		out = append(out, fmt.Sprintf("%v %v", s.Labels, s.Points))
	}
	sort.Strings(out)
	return out
}

// freshBodies is a lakeread.Fresh of requests no file holds.
type freshBodies [][]byte

func (f freshBodies) Fresh(_ context.Context, sig otlpwire.Signal, _ string, fn func([]byte) error) (uint64, error) {
	if sig != otlpwire.SignalLogs {
		return 0, nil
	}
	for _, b := range f {
		if err := fn(b); err != nil {
			return 0, err
		}
	}
	return 1 << 62, nil
}

// unfiltered is the lake as a source that tests nothing on its columns:
// every record of the range reaches the pipeline.
type unfiltered struct{ s lakeSource }

func (u unfiltered) Logs(ctx context.Context, tenant string, s eval.Scan, fn func(*eval.Record) bool) error {
	s.Service, s.Contains, s.Matches, s.AttrValues = nil, nil, nil, nil
	return u.s.Logs(ctx, tenant, s, fn)
}

func (u unfiltered) LogStreams(ctx context.Context, tenant string, start, end time.Time) ([]eval.Record, error) {
	return u.s.LogStreams(ctx, tenant, start, end)
}

// TestFiltersOnColumnsAsPipeline: log and metric queries whose |=, |~,
// label filters and selector matchers the lake tests on its columns
// (lakeread.LogQuery's Contains, Matches and AttrValues) answer as the
// same queries over every record, the pipeline alone filtering: line
// filters before and after label filters, values of ints and bools, a
// value another key also has, an or (not tested on columns), filters
// after a parser (not tested on columns), records in files and in the
// spool. And the columns do keep records from the pipeline.
func TestFiltersOnColumnsAsPipeline(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	r := lakeWithFresh(t, start, 70, 6, 1, 7*time.Minute)
	pushed := eval.NewEngine(eval.Config{Source: lakeSource{r: r}, MaxSeries: 10_000, MaxPoints: 11_000})
	plain := eval.NewEngine(eval.Config{Source: unfiltered{lakeSource{r: r}}, MaxSeries: 10_000, MaxPoints: 11_000})
	queries := []string{
		`{service_name=~".+"} |~ "[0-9]{3}ms"`,
		`{service_name=~".+"} |= "e" |~ "[aeiou]{2}[^ ]+ [0-9]"`,
		`{service_name=~".+"} | app_customer_tier="enterprise"`,
		`{service_name=~".+"} | app_customer_tier="enterprise" | http_response_status_code="503"`,
		`{service_name=~".+"} | http_response_status_code="200" |~ "a.c"`,
		`{service_name=~".+"} | app_cache_hit="true" and db_system_name="redis"`,
		`{service_name=~".+"} | messaging_destination_name="orders"`,
		`{service_name=~".+"} | app_customer_tier="pro" or app_customer_tier="free"`,
		`{app_customer_tier="free"}`,
		`{service_name=~".+"} | logfmt | app_customer_tier="pro"`,
		`{service_name=~".+"} | line_format "{{.app_customer_tier}}" |~ "^pro$"`,
		`sum by (service_name) (count_over_time({service_name=~".+"} |~ "[0-9]+" | app_customer_tier="enterprise" [5m]))`,
	}
	var pushedLines, plainLines int64
	for _, q := range queries {
		expr, err := logql.Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		eq := eval.Query{Expr: expr, Tenant: "default", Start: start, End: start.Add(time.Hour), Step: time.Minute, Limit: 100_000}
		a, err := pushed.Exec(context.Background(), eq)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		b, err := plain.Exec(context.Background(), eq)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		ga, gb := fmt.Sprint(a.Streams, seriesText(a)), fmt.Sprint(b.Streams, seriesText(b))
		if ga != gb {
			t.Errorf("%s: with the filters on columns\n%.2000s\nwith the pipeline alone\n%.2000s", q, ga, gb)
		}
		if len(b.Streams) == 0 && len(b.Series) == 0 {
			t.Errorf("%s: nothing found: the test compares nothing", q)
		}
		pushedLines += a.Stats.Lines
		plainLines += b.Stats.Lines
	}
	t.Logf("records read: %d with the filters on columns, %d without", pushedLines, plainLines)
	if pushedLines*2 > plainLines {
		t.Errorf("the filters on columns kept %d of %d records from the pipeline: want over half", plainLines-pushedLines, plainLines)
	}
}

// TestPendingHidden: the records a pending delete request selects are
// hidden from log and metric queries, from the lake's files and the
// records not in files yet alike; the rest are answered as before.
func TestPendingHidden(t *testing.T) {
	start := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	r := lakeWithFresh(t, start, 40, 8, 2, 9*time.Minute)
	streams, err := r.LogStreams(context.Background(), "default", start, start.Add(2*time.Hour))
	if err != nil || len(streams) == 0 {
		t.Fatalf("streams %v, %v", streams, err)
	}
	svc := streams[0].Service
	sel, err := eval.CompileSelection(`{service_name="`+svc+`"}`, start.Add(-time.Hour), start.Add(3*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	pending := func(_ context.Context, tenant string) func(*eval.Record) bool {
		if tenant != "default" {
			return nil
		}
		return sel.Match
	}
	plain := NewEngine(r, 10_000, 11_000, nil)
	hiding := NewEngine(r, 10_000, 11_000, pending)
	count := func(e *eval.Engine, q string) float64 {
		expr, err := logql.Parse(q)
		if err != nil {
			t.Fatal(err)
		}
		at := start.Add(2 * time.Hour)
		res, err := e.Exec(context.Background(), eval.Query{Expr: expr, Tenant: "default", Start: at, End: at, Instant: true})
		if err != nil {
			t.Fatal(err)
		}
		sum := 0.0
		for _, s := range res.Series {
			for _, p := range s.Points {
				sum += p.V
			}
		}
		return sum
	}
	all := `sum(count_over_time({service_name=~".+"}[3h]))`
	of := `sum(count_over_time({service_name="` + svc + `"}[3h]))`
	n, nSvc := count(plain, all), count(plain, of)
	if nSvc == 0 || nSvc == n {
		t.Fatalf("%s has %v of %v records: want some, not all", svc, nSvc, n)
	}
	if got := count(hiding, of); got != 0 {
		t.Errorf("%s's records with its request pending: %v, want none", svc, got)
	}
	if got := count(hiding, all); got != n-nSvc {
		t.Errorf("every record with the request pending: %v, want %v", got, n-nSvc)
	}
}
