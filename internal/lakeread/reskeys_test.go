package lakeread

import (
	"bytes"
	"maps"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// TestDictionaryJSONKeys: the keys of a file's resources come from its
// resource_attributes dictionaries only when every data page of the
// column is dictionary-coded and every entry is a JSON object; else the
// caller is told they are not known (and searches every resource).
func TestDictionaryJSONKeys(t *testing.T) {
	write := func(node parquet.Node, groups ...[]string) *parquet.File {
		t.Helper()
		return stringColumnFile(t, "resource_attributes", parquet.Optional(node), groups, (*parquet.Writer).Flush)
	}
	dict := parquet.Encoded(parquet.String(), &parquet.RLEDictionary)
	a := []string{`{"service.name":"a","host.name":"h1"}`, "", `{"service.name":"b","k8s.pod.name":"p"}`}
	b := []string{`{"service.name":"a","cloud.region":{"x":[1,2]}}`, `{}`}
	for _, c := range []struct {
		name   string
		pf     *parquet.File
		want   []string
		wantOK bool
	}{
		{"dictionary-coded, two row groups", write(dict, a, b), []string{"cloud.region", "host.name", "k8s.pod.name", "service.name"}, true},
		{"every value null", write(dict, []string{"", ""}), nil, true},
		{"plain", write(parquet.String(), a), nil, false},
		{"an entry not an object", write(dict, []string{`{"a":"b"}`, `["a"]`}), nil, false},
		{"an entry not JSON", write(dict, []string{`{"a":`}), nil, false},
	} {
		keys, ok := dictionaryJSONKeys(c.pf, "resource_attributes")
		if ok != c.wantOK {
			t.Fatalf("%s: ok %v, want %v", c.name, ok, c.wantOK)
		}
		if got := slices.Sorted(maps.Keys(keys)); ok && !slices.Equal(got, c.want) {
			t.Fatalf("%s: keys %q, want %q", c.name, got, c.want)
		}
	}
	if _, ok := dictionaryJSONKeys(write(dict, a), "other"); ok {
		t.Fatal("a column the file lacks: keys said known")
	}
}

// stringColumnFile writes a file of one string column, name, of node's
// type: groups of values ("" a null, if node is optional), each ended by
// end (w.Flush ends a row group; ending the column writers' pages, a
// page), and opens it.
func stringColumnFile(t *testing.T, name string, node parquet.Node, groups [][]string, end func(*parquet.Writer) error) *parquet.File {
	t.Helper()
	schema := parquet.NewSchema("t", parquet.Group{name: node})
	maxDef := 0
	if node.Optional() {
		maxDef = 1
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, schema)
	for _, g := range groups {
		rows := make([]parquet.Row, len(g))
		for i, v := range g {
			if v == "" && maxDef > 0 {
				rows[i] = parquet.Row{parquet.Value{}.Level(0, 0, 0)}
			} else {
				rows[i] = parquet.Row{parquet.ByteArrayValue([]byte(v)).Level(0, maxDef, 0)}
			}
		}
		if _, err := w.WriteRows(rows); err != nil {
			t.Fatal(err)
		}
		if err := end(w); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return pf
}
