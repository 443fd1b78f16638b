package lakeread

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// FuzzJSONKVs: the scan of a flat object (flatJSONKVs) gives what
// encoding/json gives (decodedJSONKVs) for every text it accepts, and
// accepts the objects the lake writes.
func FuzzJSONKVs(f *testing.F) {
	for _, s := range []string{
		`{"service.name":"checkout","host.name":"h-1","k8s.pod.uid":"0b6c","process.pid":4121,"ratio":0.25,"on":true,"off":false}`,
		`{}`, ` { "a" : "b" , "c":-1.5e+3 } `, `{"a":"b"} trailing`, `{"a":null}`, `{"a":"\u00e9"}`, `{"a":"é"}`, `{"a":"x\"y"}`,
		`{"a":{"b":[1,2]}}`, `{"a":01}`, `{"a":1.}`, `{"a":"b"`, `{"a" "b"}`, `{"a":"b",}`, "{\"a\":\"\xff\"}", `["a"]`, ``,
		`{"a":"b","a":"c"}`, `{"a":1e5,"b":-0,"c":0.5E-2}`, `{"a":tru}`, "{\"a\":\"b\tc\"}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, ok := flatJSONKVs(b)
		if !ok {
			return
		}
		if want := decodedJSONKVs(b); !slices.Equal(got, want) {
			t.Fatalf("%q: scanned %q, encoding/json %q", b, got, want)
		}
		// The typed values tag values read the same way (of a valid
		// object: encoding/json's Unmarshal refuses text after it).
		typed, ok := flatTagValues(b, nil)
		if !ok {
			t.Fatalf("%q: flatJSONKVs reads it, flatTagValues does not", b)
		}
		if !json.Valid(b) {
			return
		}
		want := jsonTagValues(b, nil)
		byKey := func(x, y typedKV) int { return strings.Compare(x.key, y.key) }
		slices.SortFunc(typed, byKey)
		slices.SortFunc(want, byKey)
		if !slices.Equal(typed, want) {
			t.Fatalf("%q: typed %v, encoding/json %v", b, typed, want)
		}
	})
}

// TestFlatJSONKVs: the objects the lake writes for resources are
// scanned, not decoded by encoding/json, and the others go to it.
func TestFlatJSONKVs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []KV
		ok   bool
	}{
		{`{"service.name":"checkout","process.pid":4121,"x":0.25,"on":true}`,
			[]KV{{"service.name", "checkout"}, {"process.pid", "4121"}, {"x", "0.25"}, {"on", "true"}}, true},
		{`{}`, nil, true},
		{`{"a":"x\"y"}`, nil, false},
		{`{"a":{"b":1}}`, nil, false},
		{`{"a":null}`, nil, false},
		{`{"a":"b"`, nil, false},
	} {
		got, ok := flatJSONKVs([]byte(c.in))
		if ok != c.ok || !slices.Equal(got, c.want) {
			t.Errorf("%s: %q %v, want %q %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
