package synth

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// TestSeedLogsShape checks the lake seed's workload shape with pdata:
// about 15 attributes per record (resource + scope + record) and string
// bodies of about 47 bytes.
func TestSeedLogsShape(t *testing.T) {
	b := SeedLogs(Config{Seed: 3, Resources: 4, ScopesPerResource: 2, TotalRecords: 2000})
	var u plog.ProtoUnmarshaler
	ld, err := u.UnmarshalLogs(b)
	if err != nil {
		t.Fatal(err)
	}
	attrs, bodies, n := 0, 0, 0
	rls := ld.ResourceLogs()
	for i := range rls.Len() {
		ra := rls.At(i).Resource().Attributes().Len()
		for j := range rls.At(i).ScopeLogs().Len() {
			sl := rls.At(i).ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				attrs += ra + sl.Scope().Attributes().Len() + lr.Attributes().Len()
				bodies += len(lr.Body().Str())
				n++
			}
		}
	}
	if n != 2000 {
		t.Fatalf("%d records", n)
	}
	if avg := float64(attrs) / float64(n); avg < 13 || avg > 17 {
		t.Errorf("%.1f attributes per record, want about 15", avg)
	}
	if avg := float64(bodies) / float64(n); avg < 35 || avg > 60 {
		t.Errorf("bodies of %.1f bytes on average, want about 47", avg)
	}
}
