package otlpwire_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestAttributesRaw: Raw is the region the pairs are read from, so two
// records with the same attributes written the same way have equal Raw,
// and records with other attributes do not.
func TestAttributesRaw(t *testing.T) {
	req := otlpwire.LogsRequest(synth.SeedLogs(synth.Config{Seed: 7, Resources: 1, ScopesPerResource: 1, TotalRecords: 200}))
	var f otlpwire.LogRecordFields
	byRaw := map[string]string{} // Raw -> the pairs decoded, as text
	n := 0
	for rl, err := range req.ResourceLogs() {
		if err != nil {
			t.Fatal(err)
		}
		for sl, err := range rl.ScopeLogs() {
			if err != nil {
				t.Fatal(err)
			}
			for lr, err := range sl.LogRecords() {
				if err != nil {
					t.Fatal(err)
				}
				if err := lr.Read(&f); err != nil {
					t.Fatal(err)
				}
				var pairs bytes.Buffer
				for kv, err := range f.Attributes.All() {
					if err != nil {
						t.Fatal(err)
					}
					pairs.Write(kv.Key)
					pairs.WriteByte('=')
					v := kv.Value
					switch v.Type() {
					case otlpwire.ValueString:
						pairs.Write(v.Str())
					case otlpwire.ValueBytes:
						pairs.Write(v.Bytes())
					case otlpwire.ValueInt:
						fmt.Fprint(&pairs, v.Int())
					case otlpwire.ValueDouble:
						fmt.Fprint(&pairs, v.Double())
					case otlpwire.ValueBool:
						fmt.Fprint(&pairs, v.Bool())
					default:
						fmt.Fprint(&pairs, "type ", v.Type())
					}
					pairs.WriteByte(';')
				}
				raw := f.Attributes.Raw()
				if len(raw) > len(lr) || (len(raw) > 0 && !bytes.Contains(lr, raw)) {
					t.Fatalf("Raw is not a region of its record")
				}
				if prev, ok := byRaw[string(raw)]; ok && prev != pairs.String() {
					t.Fatalf("equal Raw, different pairs:\n%s\n%s", prev, pairs.String())
				}
				byRaw[string(raw)] = pairs.String()
				n++
			}
		}
	}
	t.Logf("%d distinct attribute regions in %d records", len(byRaw), n)
	if len(byRaw) < 2 {
		t.Fatal("the workload has one attribute set; the test proves nothing")
	}
}

// TestListEach: Each visits every element in order, and stops at f's
// first error and returns it.
func TestListEach(t *testing.T) {
	req := otlpwire.MetricsRequest(synth.Metrics(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 40}))
	var mf otlpwire.MetricFields
	stop := fmt.Errorf("stop")
	checked := 0
	for rm, err := range req.ResourceMetrics() {
		if err != nil {
			t.Fatal(err)
		}
		for sm, err := range rm.ScopeMetrics() {
			if err != nil {
				t.Fatal(err)
			}
			for m, err := range sm.Metrics() {
				if err != nil {
					t.Fatal(err)
				}
				if err := m.Read(&mf); err != nil {
					t.Fatal(err)
				}
				if mf.Type != otlpwire.MetricTypeGauge && mf.Type != otlpwire.MetricTypeSum {
					continue
				}
				want, err := m.DataPointCount()
				if err != nil {
					t.Fatal(err)
				}
				var seen []otlpwire.NumberDataPoint
				if err := mf.NumberDataPoints().Each(func(p otlpwire.NumberDataPoint) error { seen = append(seen, p); return nil }); err != nil || len(seen) != want {
					t.Fatalf("Each visited %d points, %v; want %d", len(seen), err, want)
				}
				i := 0
				for p := range mf.NumberDataPoints().All() {
					if !bytes.Equal(p, seen[i]) {
						t.Fatalf("point %d differs from All's", i)
					}
					i++
				}
				n := 0
				if err := mf.NumberDataPoints().Each(func(otlpwire.NumberDataPoint) error { n++; return stop }); err != stop || n != 1 {
					t.Fatalf("Each after f's error: %d calls, %v", n, err)
				}
				checked++
			}
		}
	}
	if checked == 0 {
		t.Fatal("no gauge or sum in the request")
	}
}
