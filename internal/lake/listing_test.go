package lake

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// TestDataFilesLeavesInputsOut: with an intent whose output is listed,
// a reader counts the output and not the inputs; with no output yet, the
// inputs; a damaged intent changes nothing.
func TestDataFilesLeavesInputsOut(t *testing.T) {
	const dir = "logs/tenant=t/date=2030-01-01/hour=05"
	in1, in2 := parquetFile(NodeName("a", RangeName(1, 1))), parquetFile(NodeName("a", RangeName(2, 2)))
	out := mergeName("a", 1, 2, 1)
	other := parquetFile(NodeName("b", RangeName(1, 1)))
	for _, c := range []struct {
		name   string
		files  []string
		intent string
		want   []string
	}{
		{"no intent", []string{in1, in2, other}, "", []string{in1, in2, other}},
		{"output not yet in place", []string{in1, in2, other}, `{"output":"` + out + `","inputs":["` + in1 + `","` + in2 + `"]}`, []string{in1, in2, other}},
		{"swap under way", []string{in1, in2, out, other}, `{"output":"` + out + `","inputs":["` + in1 + `","` + in2 + `"]}`, []string{out, other}},
		{"inputs partly removed", []string{in2, out, other}, `{"output":"` + out + `","inputs":["` + in1 + `","` + in2 + `"]}`, []string{out, other}},
		{"damaged intent", []string{in1, in2, out, other}, `{"output":`, []string{in1, in2, out, other}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := bucket.NewLocal(t.TempDir())
			ctx := context.Background()
			for _, f := range c.files {
				if err := b.Upload(ctx, dir+"/"+f, strings.NewReader("x")); err != nil {
					t.Fatal(err)
				}
			}
			if c.intent != "" {
				if err := b.Upload(ctx, dir+"/"+intentFile, strings.NewReader(c.intent)); err != nil {
					t.Fatal(err)
				}
			}
			got := dataFileNames(t, b)
			want := slices.Clone(c.want)
			for i := range want {
				want[i] = dir + "/" + want[i]
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("DataFiles = %v, want %v", got, want)
			}
		})
	}
}

func dataFileNames(t testing.TB, b bucket.Bucket) []string {
	t.Helper()
	files, err := DataFiles(context.Background(), b, "logs/")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	return names
}

// FuzzDataFiles: whatever a partition's intent holds, DataFiles never
// fails or panics on it, leaves out only files the intent names as
// inputs (never its output), and only when the output is listed.
func FuzzDataFiles(f *testing.F) {
	in1, in2 := parquetFile(RangeName(1, 1)), parquetFile(RangeName(2, 2))
	out := mergeName("", 1, 2, 1)
	seed, _ := json.Marshal(intent{Output: out, Inputs: []string{in1, in2}})
	f.Add(seed)
	f.Add([]byte(`{"output":"` + in1 + `","inputs":["` + in1 + `"]}`))
	f.Add([]byte(`{"output":"../x","inputs":["../../etc"]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		const dir = "logs/tenant=t/date=2030-01-01/hour=05"
		b := bucket.NewLocal(t.TempDir()).WithoutSync()
		ctx := context.Background()
		all := []string{in1, in2, out}
		for _, name := range all {
			if err := b.Upload(ctx, dir+"/"+name, strings.NewReader("x")); err != nil {
				t.Fatal(err)
			}
		}
		if err := b.Upload(ctx, dir+"/"+intentFile, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		got := dataFileNames(t, b)
		var in intent
		parsed := json.Unmarshal(data, &in) == nil
		for _, name := range all {
			kept := slices.Contains(got, dir+"/"+name)
			named := parsed && slices.Contains(in.Inputs, name) && name != in.Output && slices.Contains(all, in.Output)
			if kept == named {
				t.Fatalf("intent %q: %s kept %v (named as an input of a listed output: %v)", data, name, kept, named)
			}
		}
	})
}
