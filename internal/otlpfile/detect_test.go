package otlpfile

import (
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestDetectSignal(t *testing.T) {
	for _, sig := range otlpwire.Signals {
		for _, o := range []synth.Order{synth.Ascending, synth.Descending} {
			t.Run(sig.String(), func(t *testing.T) {
				for seed := range int64(20) {
					b := synth.Random(rand.New(rand.NewPCG(uint64(seed), 7)), sig, o)
					if n, _ := sig.Count(b); n == 0 {
						continue
					}
					got, why, err := DetectSignal(b)
					if err != nil || got != sig || !strings.Contains(why, sig.String()+" with") {
						t.Fatalf("seed %d: %v %q %v", seed, got, why, err)
					}
				}
			})
		}
	}
	_, _, err := DetectSignal([]byte{0x0a, 0x7f})
	if !errors.Is(err, ErrUnknownSignal) || !strings.Contains(err.Error(), "not logs (") {
		t.Errorf("a truncated request: %v", err)
	}
}

func TestReaderDetects(t *testing.T) {
	dir := t.TempDir()
	c := synth.Config{Seed: 2, Resources: 1, ScopesPerResource: 1, TotalRecords: 9}
	tracesJSON, err := otlpjson.FromProto(otlpwire.SignalTraces, synth.Traces(c))
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := zstd.NewWriter(nil)
	files := []struct {
		name string
		data []byte
		sig  otlpwire.Signal
		from string
	}{
		{"a.binpb", synth.Logs(c), otlpwire.SignalLogs, "protobuf content: "},
		{"b.json", tracesJSON, otlpwire.SignalTraces, "JSON field resourceSpans"},
		{"c", enc.EncodeAll(synth.Generate(otlpwire.SignalMetrics, c), nil), otlpwire.SignalMetrics, "protobuf content: "},
		{"d.binpb", nil, 0, ""},
	}
	r, err := NewReader(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, f := range files {
		t.Run(f.name, func(t *testing.T) {
			p := filepath.Join(dir, f.name)
			if err := os.WriteFile(p, f.data, 0o644); err != nil {
				t.Fatal(err)
			}
			in, err := Sniff(p)
			if err != nil {
				t.Fatal(err)
			}
			file, err := r.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if file.Signal != f.sig || !strings.HasPrefix(file.SignalFrom, f.from) {
				t.Errorf("signal %v from %q, want %v from %q", file.Signal, file.SignalFrom, f.sig, f.from)
			}
		})
	}
}
