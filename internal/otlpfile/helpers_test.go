package otlpfile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// logsReq and tracesReq are generated requests of n records.
func logsReq(seed int64, n int) []byte {
	return synth.Logs(synth.Config{Seed: seed, Resources: 2, ScopesPerResource: 1, TotalRecords: n})
}

func tracesReq(seed int64, n int) []byte {
	return synth.Traces(synth.Config{Seed: seed, Resources: 2, ScopesPerResource: 1, TotalRecords: n})
}

// delimited frames reqs as the Collector's file exporter does.
func delimited(reqs ...[]byte) []byte {
	var b []byte
	for _, r := range reqs {
		b = binary.BigEndian.AppendUint32(b, uint32(len(r)))
		b = append(b, r...)
	}
	return b
}

func gzipped(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstded(t testing.TB, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

// toJSON is req as OTLP/JSON, written by pdata.
func toJSON(t testing.TB, sig otlpwire.Signal, req []byte) []byte {
	t.Helper()
	var (
		b   []byte
		err error
	)
	if sig == otlpwire.SignalLogs {
		r := plogotlp.NewExportRequest()
		if err = r.UnmarshalProto(req); err == nil {
			b, err = r.MarshalJSON()
		}
	} else {
		r := ptraceotlp.NewExportRequest()
		if err = r.UnmarshalProto(req); err == nil {
			b, err = r.MarshalJSON()
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pdataProto is req decoded and re-encoded by pdata: what the JSON path
// yields for the JSON of req.
func pdataProto(t testing.TB, sig otlpwire.Signal, req []byte) []byte {
	t.Helper()
	b, err := transcodeJSON(sig, toJSON(t, sig, req))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// input is the Input of path, as Collect would return it.
func input(t testing.TB, path string) Input {
	t.Helper()
	in, err := Collect([]string{path})
	if err != nil || len(in) != 1 {
		t.Fatalf("Collect(%s) = %v, %v", path, in, err)
	}
	return in[0]
}

func newReader(t testing.TB, sig otlpwire.Signal, maxFileSize ...int64) *Reader {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Signal = sig
	if len(maxFileSize) > 0 {
		cfg.MaxFileSize = maxFileSize[0]
	}
	r, err := NewReader(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func indentJSON(dst *bytes.Buffer, b []byte) error { return json.Indent(dst, b, "  ", "  ") }
