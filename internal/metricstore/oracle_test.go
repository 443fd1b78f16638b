package metricstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/storage/remote/otlptranslator/prometheusremotewrite"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// capture records every Append as a line, and the metadata passed with
// it by metric family, and forwards it to next (if any).
type capture struct {
	next  storage.AppenderV2
	lines []string
	meta  map[string][]metadata.Metadata
}

func (c *capture) Append(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AOptions) (storage.SeriesRef, error) {
	if f := opts.MetricFamilyName; f != "" && !slices.Contains(c.meta[f], opts.Metadata) {
		if c.meta == nil {
			c.meta = map[string][]metadata.Metadata{}
		}
		c.meta[f] = append(c.meta[f], opts.Metadata)
	}
	line := sampleLine(ls, st, t, v, h)
	for _, e := range opts.Exemplars {
		line += fmt.Sprintf(" ex{%s v=%x t=%d %v}", e.Labels, math.Float64bits(e.Value), e.Ts, e.HasTs)
	}
	c.lines = append(c.lines, line)
	if c.next == nil {
		return 0, nil
	}
	return c.next.Append(ref, ls, st, t, v, h, fh, opts)
}

func (c *capture) Commit() error {
	if c.next == nil {
		return nil
	}
	return c.next.Commit()
}

// Rollback forgets the lines appended so far: the Store rolls back a
// request out of time order and appends it again, sorted.
func (c *capture) Rollback() error {
	c.lines = c.lines[:0]
	if c.next == nil {
		return nil
	}
	return c.next.Rollback()
}

func sampleLine(ls labels.Labels, st, t int64, v float64, h *histogram.Histogram) string {
	if h != nil {
		return fmt.Sprintf("%s st=%d t=%d h=%s sum=%x count=%d hint=%d", ls, st, t, h.String(), math.Float64bits(h.Sum), h.Count, h.CounterResetHint)
	}
	return fmt.Sprintf("%s st=%d t=%d v=%x", ls, st, t, math.Float64bits(v))
}

// oracleSettings match the Store's settings in oracleConfig.
func oracleSettings(promote promconfig.OTLPConfig) prometheusremotewrite.Settings {
	return prometheusremotewrite.Settings{
		AddMetricSuffixes:                    true,
		PromoteResourceAttributes:            prometheusremotewrite.NewPromoteResourceAttributes(promote),
		PromoteScopeMetadata:                 true,
		LabelNameUnderscoreSanitization:      true,
		LabelNamePreserveMultipleUnderscores: true,
	}
}

// oracleLines translates req with Prometheus' own OTLP translator, from
// pdata's view of the request, exemplars included. Exemplars without a
// value are dropped first: the Store drops them alone, while Prometheus
// gives up the rest of the metric at one. ok is false when the translator failed in a way
// that makes it drop more than the Store rejects (it drops the rest of a
// metric at a label name it cannot translate; the Store rejects that point).
func oracleLines(t testing.TB, req []byte, promote promconfig.OTLPConfig) (lines []string, ok bool) {
	t.Helper()
	return oracleLinesWith(t, req, oracleSettings(promote))
}

// oracleLinesWith is oracleLines with the translator's settings given.
func oracleLinesWith(t testing.TB, req []byte, settings prometheusremotewrite.Settings) (lines []string, ok bool) {
	t.Helper()
	md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(req)
	if err != nil {
		t.Fatalf("pdata unmarshal: %v", err)
	}
	dropValuelessExemplars(md)
	c := &capture{}
	conv := prometheusremotewrite.NewPrometheusConverter(c)
	_, err = conv.FromMetrics(context.Background(), md, settings)
	for _, e := range flatten(err) {
		msg := e.Error()
		// Errors that drop exactly what the Store rejects.
		if !strings.Contains(msg, "invalid temporality") && !strings.Contains(msg, "unsupported metric type") &&
			!strings.Contains(msg, "resulted in empty name") {
			return nil, false
		}
	}
	return c.lines, true
}

// dropEmptyKeys removes the attributes with an empty key everywhere.
func dropEmptyKeys(md pmetric.Metrics) {
	empty := func(k string, _ pcommon.Value) bool { return k == "" }
	for _, rm := range md.ResourceMetrics().All() {
		rm.Resource().Attributes().RemoveIf(empty)
		for _, sm := range rm.ScopeMetrics().All() {
			sm.Scope().Attributes().RemoveIf(empty)
		}
	}
	eachPdataPoint(md, func(p pdataPoint, _ pmetric.ExemplarSlice) { p.Attributes().RemoveIf(empty) })
}

// pdataPoint is what the tests read and change on a pdata data point of
// any kind.
type pdataPoint interface {
	Attributes() pcommon.Map
	Timestamp() pcommon.Timestamp
	SetTimestamp(pcommon.Timestamp)
}

// eachPdataPoint calls f with every data point of md and its exemplars
// (for a summary point, which has none, an empty slice).
func eachPdataPoint(md pmetric.Metrics, f func(p pdataPoint, ex pmetric.ExemplarSlice)) {
	for _, rm := range md.ResourceMetrics().All() {
		for _, sm := range rm.ScopeMetrics().All() {
			for _, m := range sm.Metrics().All() {
				switch m.Type() {
				case pmetric.MetricTypeGauge:
					for _, p := range m.Gauge().DataPoints().All() {
						f(p, p.Exemplars())
					}
				case pmetric.MetricTypeSum:
					for _, p := range m.Sum().DataPoints().All() {
						f(p, p.Exemplars())
					}
				case pmetric.MetricTypeHistogram:
					for _, p := range m.Histogram().DataPoints().All() {
						f(p, p.Exemplars())
					}
				case pmetric.MetricTypeExponentialHistogram:
					for _, p := range m.ExponentialHistogram().DataPoints().All() {
						f(p, p.Exemplars())
					}
				case pmetric.MetricTypeSummary:
					for _, p := range m.Summary().DataPoints().All() {
						f(p, pmetric.NewExemplarSlice())
					}
				}
			}
		}
	}
}

// flatten unnests errors.Join trees.
func flatten(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flatten(e)...)
		}
		return out
	}
	if err == nil {
		return nil
	}
	return []error{err}
}

// dropValuelessExemplars removes the exemplars without a value, which the
// Store drops alone and Prometheus' translator fails the rest of the
// metric on.
func dropValuelessExemplars(md pmetric.Metrics) {
	drop := func(e pmetric.Exemplar) bool { return e.ValueType() == pmetric.ExemplarValueTypeEmpty }
	eachPdataPoint(md, func(_ pdataPoint, ex pmetric.ExemplarSlice) { ex.RemoveIf(drop) })
}

func storeLines(t testing.TB, s *Store, req []byte) ([]string, Result) {
	t.Helper()
	c := &capture{}
	s.wrap = func(next storage.AppenderV2) storage.AppenderV2 { c.next = next; return c }
	defer func() { s.wrap = nil }()
	res, err := s.AppendOTLP(context.Background(), "", req)
	if err != nil {
		t.Fatalf("AppendOTLP: %v", err)
	}
	return c.lines, res
}

func diffLines(t testing.TB, name string, got, want []string) {
	t.Helper()
	got, want = slices.Clone(got), slices.Clone(want)
	slices.Sort(got)
	slices.Sort(want)
	if slices.Equal(got, want) {
		return
	}
	var missing, extra []string
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || (i < len(got) && got[i] < want[j]):
			extra = append(extra, got[i])
			i++
		case i == len(got) || want[j] < got[i]:
			missing = append(missing, want[j])
			j++
		default:
			i++
			j++
		}
	}
	t.Errorf("%s: %d samples, oracle %d\nmissing (first 5): %s\nextra (first 5): %s", name, len(got), len(want),
		strings.Join(missing[:min(5, len(missing))], "\n  "), strings.Join(extra[:min(5, len(extra))], "\n  "))
}

// oracleConfig is testConfig(dir, set...) with start timestamps stored,
// and without the limits Prometheus' OTLP endpoint does not have.
func oracleConfig(dir string, set ...func(*Config)) Config {
	c := testConfig(dir, func(c *Config) {
		c.StartTimestampZeroSamples, c.LabelLimit, c.OutOfOrderWindow, c.MaxExemplars, c.MaxTimeAhead = true, 0, 1<<62, 100_000, 0
		c.RefuseDelta = true // as Prometheus' translator without its delta support
	})
	for _, f := range set {
		f(&c)
	}
	return c
}

// TestOracle compares, sample by sample, what the Store appends with what
// Prometheus' OTLP translator appends for the same request: label sets,
// start timestamps, timestamps, float bits (NaN, Inf and stale markers
// included), native histograms and exemplars, on realistic and random requests in both
// field orders.
func TestOracle(t *testing.T) {
	// A store for each order: requests of one seed in both orders carry
	// the same points, which the second store would find stored (not
	// appended again: duplicates).
	stores := map[synth.Order]*Store{}
	for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
		s, err := Open(oracleConfig(t.TempDir()))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		stores[o] = s
	}
	var reqs []struct {
		name  string
		order synth.Order
		b     []byte
	}
	for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
		add := func(name string, b []byte) {
			reqs = append(reqs, struct {
				name  string
				order synth.Order
				b     []byte
			}{name, o, b})
		}
		for seed := range int64(4) {
			add(fmt.Sprintf("metrics/order=%d/seed=%d", o, seed), synth.Metrics(synth.Config{Seed: seed, Order: o, Resources: 2, ScopesPerResource: 2, RecordsPerScope: 60}))
		}
		add(fmt.Sprintf("fixture/order=%d", o), synth.RealisticFixture(otlpwire.SignalMetrics, o))
		for seed := range uint64(300) {
			// Random requests repeat singular messages, which otlpwire
			// reads as protobuf does and pdata merges (see otlpwire's
			// package doc): compare on pdata's re-encoding of them.
			b := synth.Random(rand.New(rand.NewPCG(seed, 7)), otlpwire.SignalMetrics, o)
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
			if err != nil {
				continue
			}
			dropEmptyKeys(md) // Prometheus drops the rest of the metric, the Store the point
			if b, err = (&pmetric.ProtoMarshaler{}).MarshalMetrics(md); err != nil {
				t.Fatal(err)
			}
			add(fmt.Sprintf("random/order=%d/seed=%d", o, seed), b)
		}
	}
	kinds := map[string]int{}
	skipped := 0
	for _, r := range reqs {
		want, ok := oracleLines(t, r.b, promconfig.OTLPConfig{})
		got, _ := storeLines(t, stores[r.order], r.b)
		if !ok {
			skipped++
			continue
		}
		for _, l := range got {
			if strings.Contains(l, " ex{") {
				kinds["with exemplars"]++
				if strings.Contains(l, `_bucket"`) {
					kinds["bucket with exemplars"]++
				}
			}
			switch {
			case strings.Contains(l, "h={"):
				kinds["native"]++
			case strings.Contains(l, `_bucket"`):
				kinds["bucket"]++
			case strings.Contains(l, "quantile="):
				kinds["quantile"]++
			case strings.Contains(l, "target_info"):
				kinds["target_info"]++
			}
		}
		diffLines(t, r.name, got, want)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d requests, %d skipped; sample kinds %v", len(reqs), skipped, kinds)
	for _, k := range []string{"native", "bucket", "quantile", "target_info", "with exemplars", "bucket with exemplars"} {
		if kinds[k] == 0 {
			t.Errorf("no %s sample compared", k)
		}
	}
	if skipped > len(reqs)/3 {
		t.Errorf("%d of %d requests skipped", skipped, len(reqs))
	}
}

// TestOraclePromoted checks promoted resource attributes against the oracle.
func TestOraclePromoted(t *testing.T) {
	promote := []string{"k8s.cluster.name", "cloud.region", "host.name"}
	s, err := Open(oracleConfig(t.TempDir(), func(c *Config) { c.PromotedResourceAttributes = promote }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
		req := synth.Metrics(synth.Config{Seed: 3, Order: o, Resources: 3, ScopesPerResource: 1, RecordsPerScope: 50})
		got, _ := storeLines(t, s, req)
		want, ok := oracleLines(t, req, promconfig.OTLPConfig{PromoteResourceAttributes: promote})
		if !ok {
			t.Fatal("oracle failed")
		}
		diffLines(t, "promoted", got, want)
		if !strings.Contains(strings.Join(got, ""), "k8s_cluster_name") {
			t.Error("no promoted label in output")
		}
	}
}

// TestOracleNoScopeLabels: with the scope labels off, as in Prometheus'
// default configuration, series are those of Prometheus' translator with
// promote_scope_metadata off; with them on, every series names its scope.
func TestOracleNoScopeLabels(t *testing.T) {
	req := synth.Metrics(synth.Config{Seed: 5, Resources: 2, ScopesPerResource: 2, RecordsPerScope: 40})
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprintf("scope_labels=%v", on), func(t *testing.T) {
			s, err := Open(oracleConfig(t.TempDir(), func(c *Config) { c.ScopeLabels = on }))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := storeLines(t, s, req)
			s.Close()
			settings := oracleSettings(promconfig.OTLPConfig{})
			settings.PromoteScopeMetadata = on
			want, ok := oracleLinesWith(t, req, settings)
			if !ok {
				t.Fatal("oracle failed")
			}
			diffLines(t, fmt.Sprintf("scope labels %v", on), got, want)
			if n := strings.Count(strings.Join(got, "\n"), "otel_scope_name="); (n > 0) != on {
				t.Errorf("otel_scope_name in %d of %d samples", n, len(got))
			}
		})
	}
}

// TestOraclePromoteAll checks promoting every resource attribute but the
// ignored ones against the oracle, on the Kubernetes set and on the rich
// comparison payload.
func TestOraclePromoteAll(t *testing.T) {
	ignore := []string{"host.arch", "cloud.account.id"}
	s, err := Open(oracleConfig(t.TempDir(), func(c *Config) {
		c.PromoteAllResourceAttributes, c.IgnoredResourceAttributes = true, ignore
	}))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	start := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	for _, req := range [][]byte{
		synth.Metrics(synth.Config{Seed: 4, Resources: 3, ScopesPerResource: 1, RecordsPerScope: 50}),
		synth.SeriesRequest(synth.SeriesConfig{Payload: synth.PayloadRich, Series: 300, Batch: 250, Start: start, Order: synth.Descending}, 0),
	} {
		got, _ := storeLines(t, s, req)
		want, ok := oracleLines(t, req, promconfig.OTLPConfig{PromoteAllResourceAttributes: true, IgnoreResourceAttributes: ignore})
		if !ok {
			t.Fatal("oracle failed")
		}
		diffLines(t, "promote all", got, want)
		var series []string // target_info carries every resource attribute anyway
		for _, l := range got {
			if !strings.Contains(l, "target_info") {
				series = append(series, l)
			}
		}
		all := strings.Join(series, "")
		if !strings.Contains(all, "k8s_cluster_name") || strings.Contains(all, "host_arch") {
			t.Error("promote-all labels: k8s_cluster_name missing or ignored host_arch present")
		}
	}
}
