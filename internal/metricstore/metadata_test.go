package metricstore

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/prometheus/common/model"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/model/metadata"
	"github.com/prometheus/prometheus/storage/remote/otlptranslator/prometheusremotewrite"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestMetadataOracle compares the metadata the Store records for each
// metric family with what Prometheus' OTLP translator passes to its
// appender for the same requests (type, unit, help), every metric kind
// and target_info included.
func TestMetadataOracle(t *testing.T) {
	s := openWith(t, oracleConfig(t.TempDir()), nil)
	defer s.Close()
	oracle := &capture{}
	conv := prometheusremotewrite.NewPrometheusConverter(oracle)
	for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
		reqs := [][]byte{synth.RealisticFixture(otlpwire.SignalMetrics, o)}
		for seed := range int64(3) {
			reqs = append(reqs, synth.Metrics(synth.Config{Seed: seed, Order: o, Resources: 2, ScopesPerResource: 2, RecordsPerScope: 60}))
		}
		for _, req := range reqs {
			md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := conv.FromMetrics(context.Background(), md, oracleSettings(promconfig.OTLPConfig{})); err != nil {
				t.Logf("translator: %v", err) // delta metrics: refused by both
			}
			if _, err := s.AppendOTLP(context.Background(), "", req); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := s.Metadata(context.Background(), "", -1, -1)
	types := map[model.MetricType]int{}
	for f, v := range oracle.meta {
		if !reflect.DeepEqual(got[f], v) {
			t.Errorf("%s: got %v, want %v", f, got[f], v)
		}
		for _, m := range v {
			types[m.Type]++
		}
	}
	for f := range got {
		if _, ok := oracle.meta[f]; !ok {
			t.Errorf("%s: recorded %v, the translator has none", f, got[f])
		}
	}
	for _, k := range []model.MetricType{model.MetricTypeCounter, model.MetricTypeGauge, model.MetricTypeHistogram, model.MetricTypeSummary} {
		if types[k] == 0 {
			t.Errorf("no %s family compared (%v)", k, types)
		}
	}
	if len(got["target_info"]) == 0 {
		t.Error("no target_info metadata")
	}
	t.Logf("%d families, types %v", len(got), types)
}

// TestMetadataQuery checks the metric, limit and limit_per_metric rules,
// which follow Prometheus' /api/v1/metadata.
func TestMetadataQuery(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	for i, f := range []string{"c", "a", "b"} {
		for v := range 3 {
			s.meta.record("", f, metadata.Metadata{Type: model.MetricTypeGauge, Help: fmt.Sprintf("%d.%d", i, v)})
		}
	}
	s.meta.record("", "a", metadata.Metadata{Type: model.MetricTypeGauge, Help: "1.0"}) // a repeat of a known variant
	count := func(m map[string][]metadata.Metadata) (families, entries int) {
		for _, v := range m {
			families++
			entries += len(v)
		}
		return
	}
	for _, tc := range []struct {
		name                string
		metric              string
		limit, perMetric    int
		families, entries   int
		mustHave, mustNotBe string
	}{
		{"all", "", -1, -1, 3, 9, "c", ""},
		{"limit 2", "", 2, -1, 2, 6, "a", "c"}, // in name order
		{"limit 0", "", 0, -1, 0, 0, "", "a"},
		{"1 per metric", "", -1, 1, 3, 3, "b", ""},
		{"metric b", "b", -1, -1, 1, 3, "b", "a"},
		{"metric b, 2 per metric", "b", -1, 2, 1, 2, "b", ""},
		{"unknown metric", "nope", -1, -1, 0, 0, "", "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := s.Metadata(context.Background(), tc.metric, tc.limit, tc.perMetric)
			f, e := count(m)
			_, has := m[tc.mustHave]
			_, hasNot := m[tc.mustNotBe]
			if f != tc.families || e != tc.entries || tc.mustHave != "" && !has || tc.mustNotBe != "" && hasNot {
				t.Errorf("Metadata(%q, %d, %d) = %v", tc.metric, tc.limit, tc.perMetric, m)
			}
		})
	}
	for v := range maxMetaVariants + 5 {
		s.meta.record("", "many", metadata.Metadata{Help: fmt.Sprint(v)})
	}
	if n := len(s.Metadata(context.Background(), "many", -1, -1)["many"]); n != maxMetaVariants {
		t.Errorf("%d variants kept, want the bound %d", n, maxMetaVariants)
	}
}

// cancelAfter is a context whose Err is nil n times, then Canceled.
type cancelAfter struct {
	context.Context
	n int
}

func (c *cancelAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestMetadataAfterCancel: a request cancelled half-way leaves the series
// it created in the head and in the series cache; their families' metadata
// is recorded all the same, so that resending the request (which then
// creates nothing) leaves the metadata as complete as in a fresh store.
func TestMetadataAfterCancel(t *testing.T) {
	req := synth.Metrics(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, RecordsPerScope: 40})
	fresh := open(t, t.TempDir())
	defer fresh.Close()
	if _, err := fresh.AppendOTLP(context.Background(), "", req); err != nil {
		t.Fatal(err)
	}
	s := open(t, t.TempDir())
	defer s.Close()
	if _, err := s.AppendOTLP(&cancelAfter{Context: context.Background(), n: 1}, "", req); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled append: %v", err)
	}
	if s.db.Head().NumSeries() == 0 {
		t.Fatal("the cancelled request created no series: the test does not test anything")
	}
	if _, err := s.AppendOTLP(context.Background(), "", req); err != nil {
		t.Fatal(err)
	}
	if got, want := s.Metadata(context.Background(), "", -1, -1), fresh.Metadata(context.Background(), "", -1, -1); !reflect.DeepEqual(got, want) {
		t.Errorf("after a cancelled request: %d families, a fresh store %d", len(got), len(want))
	}
}
