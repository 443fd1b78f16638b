package lokipush_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"

	"github.com/wirehouse/wirehouse/internal/lokipush"
)

// TestRandomPushes: random pushes (labels of a few names, service_name
// and __ names among them, values with quotes, backslashes and newlines;
// lines of any text; structured metadata), sent as protobuf and as JSON,
// give the records the generator says, field by field: time, body, the
// stream's labels as resource attributes (service_name as service.name,
// __ names dropped, the loki.resource.labels hint naming them) and the
// metadata as record attributes (the last of a name).
func TestRandomPushes(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	d := &lokipush.Decoder{Limits: lokipush.DefaultLimits(), Now: func() time.Time { return now }}
	names := []string{"service_name", "env", "__meta", "level", "k8s_pod", "x"} // none Loki discovers a service from
	records := 0
	for seed := range uint64(200) {
		rnd := rand.New(rand.NewPCG(seed, 43))
		text := func() string {
			r := []rune(`abc xyz "\/{}=,é日本` + "\n\t")
			b := make([]rune, rnd.IntN(12))
			for i := range b {
				b[i] = r[rnd.IntN(len(r))]
			}
			return string(b)
		}
		var streams []testStream
		var want []string
		for range 1 + rnd.IntN(5) {
			ls := map[string]string{"level": "info"}
			for range rnd.IntN(4) {
				ls[names[rnd.IntN(len(names))]] = text() + "v"
			}
			var parts []string
			res := map[string]any{}
			var hint []string
			for _, k := range slices.Sorted(maps.Keys(ls)) {
				parts = append(parts, k+"="+strconv.Quote(ls[k]))
				if strings.HasPrefix(k, "__") {
					continue
				}
				key := k
				if k == "service_name" {
					key = "service.name"
				}
				res[key] = ls[k]
				hint = append(hint, key)
			}
			res["loki.resource.labels"] = strings.Join(hint, ",")
			s := testStream{labels: "{" + strings.Join(parts, ", ") + "}", obj: ls}
			for range rnd.IntN(6) {
				e := testEntry{ts: now.Add(-time.Duration(rnd.Int64N(int64(time.Hour)))).UnixNano(), line: text()}
				md := map[string]any{}
				for range rnd.IntN(3) {
					m := [2]string{names[rnd.IntN(len(names))], text()}
					if _, dup := md[m[0]]; dup {
						continue // one value a name: the JSON object has one
					}
					e.md = append(e.md, m)
					md[m[0]] = m[1]
				}
				s.es = append(s.es, e)
				r, _ := json.Marshal(res)
				a, _ := json.Marshal(md)
				want = append(want, fmt.Sprintf("%d %q %s %s", e.ts, e.line, r, a))
			}
			streams = append(streams, s)
		}
		for _, way := range []string{"protobuf", "JSON"} {
			var out []byte
			var st lokipush.Stats
			var err error
			if way == "protobuf" {
				out, st, err = d.Proto(nil, pushProto(streams))
			} else {
				out, st, err = d.JSON(nil, pushJSON(streams))
			}
			if err != nil || st.Refused != 0 {
				t.Fatalf("seed %d, %s: %v, %+v", seed, way, err, st)
			}
			ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(out)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, rl := range ld.ResourceLogs().All() {
				r, _ := json.Marshal(rl.Resource().Attributes().AsRaw())
				for _, sl := range rl.ScopeLogs().All() {
					for _, lr := range sl.LogRecords().All() {
						a, _ := json.Marshal(lr.Attributes().AsRaw())
						got = append(got, fmt.Sprintf("%d %q %s %s", lr.Timestamp(), lr.Body().Str(), r, a))
					}
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d, %s:\n got  %q\n want %q", seed, way, got, want)
			}
		}
		records += len(want)
	}
	if records < 500 {
		t.Errorf("only %d records compared", records)
	}
}
