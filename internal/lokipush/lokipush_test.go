package lokipush_test

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/lokipush"
)

// A push for the tests, written both ways: streams of labels (as Loki's
// text and as a JSON object) and entries of a time, a line and metadata.
type testEntry struct {
	ts   int64
	line string
	md   [][2]string
}

type testStream struct {
	labels string            // Loki's text form
	obj    map[string]string // the same as a JSON object (nil: labels do not parse)
	es     []testEntry
}

// pushProto encodes streams as a PushRequest.
func pushProto(streams []testStream) []byte {
	var req []byte
	for _, s := range streams {
		var sb []byte
		sb = protowire.AppendTag(sb, 1, protowire.BytesType)
		sb = protowire.AppendString(sb, s.labels)
		for _, e := range s.es {
			var ts, eb []byte
			ts = protowire.AppendTag(ts, 1, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.ts/1e9))
			ts = protowire.AppendTag(ts, 2, protowire.VarintType)
			ts = protowire.AppendVarint(ts, uint64(e.ts%1e9))
			eb = protowire.AppendTag(eb, 1, protowire.BytesType)
			eb = protowire.AppendBytes(eb, ts)
			eb = protowire.AppendTag(eb, 2, protowire.BytesType)
			eb = protowire.AppendString(eb, e.line)
			for _, m := range e.md {
				var p []byte
				p = protowire.AppendTag(p, 1, protowire.BytesType)
				p = protowire.AppendString(p, m[0])
				p = protowire.AppendTag(p, 2, protowire.BytesType)
				p = protowire.AppendString(p, m[1])
				eb = protowire.AppendTag(eb, 3, protowire.BytesType)
				eb = protowire.AppendBytes(eb, p)
			}
			sb = protowire.AppendTag(sb, 2, protowire.BytesType)
			sb = protowire.AppendBytes(sb, eb)
		}
		req = protowire.AppendTag(req, 1, protowire.BytesType)
		req = protowire.AppendBytes(req, sb)
	}
	return req
}

// pushJSON encodes the streams whose labels parse as Loki's JSON.
func pushJSON(streams []testStream) []byte {
	var b strings.Builder
	b.WriteString(`{"streams":[`)
	first := true
	for _, s := range streams {
		if s.obj == nil {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		b.WriteString(`{"stream":{`)
		i := 0
		for k, v := range s.obj {
			if i > 0 {
				b.WriteString(",")
			}
			i++
			fmt.Fprintf(&b, "%q:%q", k, v)
		}
		b.WriteString(`},"values":[`)
		for j, e := range s.es {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `["%d",%q`, e.ts, e.line)
			if e.md != nil {
				b.WriteString(",{")
				for k, m := range e.md {
					if k > 0 {
						b.WriteString(",")
					}
					fmt.Fprintf(&b, "%q:%q", m[0], m[1])
				}
				b.WriteString("}")
			}
			b.WriteString("]")
		}
		b.WriteString("]}")
	}
	b.WriteString("]}")
	return []byte(b.String())
}

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func testStreams() []testStream {
	at := func(d time.Duration) int64 { return now.Add(d).UnixNano() }
	many := map[string]string{}
	var manyText []string
	for i := range 16 {
		many["l"+strconv.Itoa(i)] = "v"
		manyText = append(manyText, fmt.Sprintf(`l%d="v"`, i))
	}
	return []testStream{
		{`{service_name="api", job="x", __hidden="1"}`, map[string]string{"service_name": "api", "job": "x", "__hidden": "1"}, []testEntry{
			{at(-time.Minute), "GET /a 200", [][2]string{{"trace_id", "abc"}, {"user", "ann"}}},
			{at(-time.Minute + 1), "GET /b 500", nil},
			{at(-8 * 24 * time.Hour), "too old", nil},
			{at(-time.Second), strings.Repeat("x", 300<<10), nil},
		}},
		{`{job="y"}`, map[string]string{"job": "y"}, []testEntry{
			{at(-2 * time.Second), "héllo", nil},
			{at(time.Hour), "too new", nil},
		}},
		{`{job=y}`, nil, []testEntry{{at(-time.Second), "bad labels", nil}}},
		{"{" + strings.Join(manyText, ",") + "}", many, []testEntry{{at(-time.Second), "16 labels", nil}}},
	}
}

func decoder() *lokipush.Decoder {
	return &lokipush.Decoder{Limits: lokipush.DefaultLimits(), Now: func() time.Time { return now }}
}

// TestProto: a push of four streams: the first two's entries in the
// limits become records of a resource of the stream's labels
// (service_name as service.name, __hidden dropped; the second, without
// service_name, takes its job's) named by loki.resource.labels, the
// others are
// counted as refused with Loki's reasons; pdata reads the result.
func TestProto(t *testing.T) {
	out, st, err := decoder().Proto(nil, pushProto(testStreams()))
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 8 || st.Refused != 5 || !strings.HasPrefix(st.Reason, "greater_than_max_sample_age") {
		t.Errorf("stats %+v, want 8 entries, 5 refused, the first too old", st)
	}
	ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, rl := range ld.ResourceLogs().All() {
		res := fmt.Sprint(rl.Resource().Attributes().AsRaw())
		for _, sl := range rl.ScopeLogs().All() {
			for _, lr := range sl.LogRecords().All() {
				got = append(got, fmt.Sprintf("%s %d %q %v observed=%v", res, int64(lr.Timestamp())-now.UnixNano(), lr.Body().Str(), lr.Attributes().AsRaw(), lr.ObservedTimestamp().AsTime().Equal(now)))
			}
		}
	}
	want := []string{
		`map[job:x loki.resource.labels:job,service.name service.name:api] -60000000000 "GET /a 200" map[trace_id:abc user:ann] observed=true`,
		`map[job:x loki.resource.labels:job,service.name service.name:api] -59999999999 "GET /b 500" map[] observed=true`,
		`map[job:y loki.resource.labels:job,service.name service.name:y] -2000000000 "héllo" map[] observed=true`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestJSON: the same push as JSON gives the same request.
func TestJSON(t *testing.T) {
	want, wst, err := decoder().Proto(nil, pushProto(testStreams()))
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := decoder().JSON(nil, pushJSON(testStreams()))
	if err != nil {
		t.Fatal(err)
	}
	// The JSON has no stream of unparsable labels: one entry fewer.
	if !bytes.Equal(got, want) || st.Entries != wst.Entries-1 || st.Refused != wst.Refused-1 {
		t.Errorf("JSON gave %d bytes and %+v; protobuf %d and %+v", len(got), st, len(want), wst)
	}
}

// TestJSONLegacy: the older JSON shape (labels as text, entries of an
// RFC 3339 time and a line), which python-logging-loki sends by default,
// gives the records the current shape gives.
func TestJSONLegacy(t *testing.T) {
	ts := now.Add(-time.Minute)
	cur := fmt.Sprintf(`{"streams":[{"stream":{"job":"a","level":"info"},"values":[["%d","one"],["%d","two"]]}]}`, ts.UnixNano(), ts.UnixNano()+1500)
	old := fmt.Sprintf(`{"streams":[{"labels":"{job=\"a\",level=\"info\"}","entries":[{"ts":%q,"line":"one"},{"ts":%q,"line":"two"}]}]}`,
		ts.Format(time.RFC3339Nano), ts.Add(1500).Format(time.RFC3339Nano))
	want, _, err := decoder().JSON(nil, []byte(cur))
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := decoder().JSON(nil, []byte(old))
	if err != nil || !bytes.Equal(got, want) || st.Entries != 2 || st.Refused != 0 {
		t.Errorf("legacy JSON: %v, %+v, same request %v", err, st, bytes.Equal(got, want))
	}
}

// TestMalformed: bodies that do not decode are ErrMalformed, dst kept.
func TestMalformed(t *testing.T) {
	pb := pushProto(testStreams())
	// A stream of one entry whose timestamp has 2e9 nanoseconds.
	var ts, e, st, badNanos []byte
	ts = protowire.AppendTag(ts, 2, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 2e9)
	e = protowire.AppendTag(e, 1, protowire.BytesType)
	e = protowire.AppendBytes(e, ts)
	st = protowire.AppendTag(st, 2, protowire.BytesType)
	st = protowire.AppendBytes(st, e)
	badNanos = protowire.AppendTag(badNanos, 1, protowire.BytesType)
	badNanos = protowire.AppendBytes(badNanos, st)
	for name, c := range map[string]struct {
		json bool
		body []byte
	}{
		"truncated protobuf":   {false, pb[:len(pb)/2]},
		"nanos past a second":  {false, badNanos},
		"not JSON":             {true, []byte(`{"streams": [`)},
		"a number timestamp":   {true, []byte(`{"streams": [{"stream": {"a": "b"}, "values": [[1, "x"]]}]}`)},
		"four elements":        {true, []byte(`{"streams": [{"stream": {"a": "b"}, "values": [["1", "x", {}, 1]]}]}`)},
		"metadata not strings": {true, []byte(`{"streams": [{"stream": {"a": "b"}, "values": [["1", "x", {"k": 1}]]}]}`)},
	} {
		dst := []byte("kept")
		var err error
		if c.json {
			dst, _, err = decoder().JSON(dst, c.body)
		} else {
			dst, _, err = decoder().Proto(dst, c.body)
		}
		if !errors.Is(err, lokipush.ErrMalformed) || string(dst) != "kept" {
			t.Errorf("%s: %v, dst %.10q", name, err, dst)
		}
	}
}

// TestReserve: each stream's bytes are reserved before they are written;
// a refusal stops the push with ErrBudget.
func TestReserve(t *testing.T) {
	d := decoder()
	var asked int64
	d.Reserve = func(n int64) bool { asked += n; return true }
	out, _, err := d.Proto(nil, pushProto(testStreams()))
	if err != nil || asked != int64(len(out)) {
		t.Fatalf("reserved %d for %d bytes: %v", asked, len(out), err)
	}
	d.Reserve = func(int64) bool { return false }
	if _, _, err := d.Proto(nil, pushProto(testStreams())); !errors.Is(err, lokipush.ErrBudget) {
		t.Errorf("a refused reservation: %v", err)
	}
}
