package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/klauspost/compress/gzip"
	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestInspect(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"gen", "--signal", "traces", "--requests", "2", "--per-request", "300",
		"--resources", "3", "--compress", "gzip", "--out", dir}, &out, &errb)
	if err != nil {
		t.Fatalf("gen: %v\n%s", err, errb.String())
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*"))
	out.Reset()
	if err := run(context.Background(), append([]string{"inspect"}, files...), &out, &errb); err != nil {
		t.Fatalf("inspect: %v\n%s", err, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1+2*3+1 {
		t.Fatalf("want header, 6 resource lines and a total, got:\n%s", out.String())
	}
	// The resource lines must agree with pdata's view of the same requests.
	wantServices := map[string]int{}
	for i := range 2 {
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(synth.Traces(synth.Config{Seed: int64(i), Resources: 3, ScopesPerResource: 1, TotalRecords: 300}))
		if err != nil {
			t.Fatal(err)
		}
		for j := 0; j < td.ResourceSpans().Len(); j++ {
			rs := td.ResourceSpans().At(j)
			v, _ := rs.Resource().Attributes().Get("service.name")
			n := 0
			for k := 0; k < rs.ScopeSpans().Len(); k++ {
				n += rs.ScopeSpans().At(k).Spans().Len()
			}
			wantServices[v.Str()+"/"+strconv.Itoa(n)]++
		}
	}
	for _, l := range lines[1:7] {
		f := strings.Fields(l)
		if f[1] != "traces" {
			t.Errorf("line %q: signal %q, want traces (told from the content)", l, f[1])
		}
		key := f[3] + "/" + f[5]
		if wantServices[key] == 0 {
			t.Errorf("line %q: no resource with service %s and %s spans in the generated data (%v)", l, f[3], f[5], wantServices)
		}
		wantServices[key]--
	}
	if total := strings.Fields(lines[7]); total[0] != "total" || total[3] != "600" {
		t.Errorf("total line %q, want 600 records", lines[7])
	}
}

func TestInspectBadInput(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "logs-bad.binpb")
	if err := os.WriteFile(bad, []byte{0x0a, 0x7f, 0x01}, 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), []string{"inspect", bad}, &out, &errb)
	if err == nil || !strings.Contains(errb.String(), "resource_logs[0]: truncated") {
		t.Fatalf("err = %v, stderr %q; want the malformed file reported with its path", err, errb.String())
	}
	err = run(context.Background(), []string{"inspect", "--max-size", "0", bad}, &out, &errb)
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "max-size") {
		t.Fatalf("err = %v, want a usage error naming -max-size", err)
	}
}

// TestInspectAnyName: OTLP/JSON and protobuf files with names that say
// nothing, compressed or not, are read and their signal told.
func TestInspectAnyName(t *testing.T) {
	dir := t.TempDir()
	c := synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 20}
	metricsJSON, err := otlpjson.FromProto(otlpwire.SignalMetrics, synth.Generate(otlpwire.SignalMetrics, c))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(synth.Logs(c))
	zw.Close()
	files := map[string][]byte{"capture": metricsJSON, "dump.dat": gz.Bytes(), "spans": synth.Traces(c)}
	var paths []string
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	var out, errb bytes.Buffer
	if err := run(context.Background(), append([]string{"inspect"}, paths...), &out, &errb); err != nil {
		t.Fatalf("inspect: %v\n%s", err, errb.String())
	}
	got := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n")[1:] {
		f := strings.Fields(l)
		if f[0] == "total" {
			continue
		}
		n, _ := strconv.Atoi(f[5])
		got[f[0]+" "+f[1]] += n
	}
	want := map[string]int{"capture metrics": 20, "dump.dat logs": 20, "spans traces": 20}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records by file and signal %v, want %v\n%s", got, want, out.String())
	}
}
