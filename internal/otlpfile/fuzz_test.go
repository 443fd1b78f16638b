package otlpfile

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzReadFile reads arbitrary file contents under each kind of name: raw
// or length-delimited protobuf, gzip, zstd and JSON. Size hints in gzip
// and zstd headers come from the input. ReadFile must not panic, must
// respect the maximum size, and what it returns must lie inside the
// content it read, in order.
func FuzzReadFile(f *testing.F) {
	l0, l1 := logsReq(0, 2), logsReq(1, 1)
	for _, b := range [][]byte{l0, delimited(l0, l1), gzipped(f, l0), gzipped(f, delimited(l1)), zstded(f, l1), toJSON(f, otlpwire.SignalLogs, l1)} {
		if len(b) < 2048 {
			for kind := range byte(len(fuzzNames)) {
				f.Add(kind, b)
			}
		}
	}
	f.Add(byte(2), []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0x7f})
	dir := f.TempDir()
	const max = 1 << 20
	// One Reader for the whole run, as ingest uses one for many files:
	// what a file leaves in its buffers must not leak into the next.
	r, err := NewReader(Config{Signal: otlpwire.SignalLogs, MaxFileSize: max})
	if err != nil {
		f.Fatal(err)
	}
	defer r.Close()
	// And one that tells each file's signal, reading any name (Sniff).
	auto, err := NewReader(Config{MaxFileSize: max})
	if err != nil {
		f.Fatal(err)
	}
	defer auto.Close()
	f.Fuzz(func(t *testing.T, kind byte, content []byte) {
		if raw := filepath.Join(dir, "raw"); os.WriteFile(raw, content, 0o644) == nil {
			in, err := Sniff(raw)
			if err != nil {
				t.Fatal(err)
			}
			if file, err := auto.ReadFile(in); err == nil {
				if (file.Signal == 0) != (file.SignalFrom == "") || file.Signal != 0 && !file.Signal.Valid() {
					t.Fatalf("signal %v from %q", file.Signal, file.SignalFrom)
				}
				if file.Signal != 0 && in.Format == FormatProto {
					for _, req := range file.Requests {
						if n, err := file.Signal.Count(req); err == nil && n > 0 {
							if verr := file.Signal.Validate(req); verr != nil {
								t.Fatalf("a request with records told as %v does not validate as it: %v", file.Signal, verr)
							}
							break
						}
					}
				}
			}
		}
		name := fuzzNames[int(kind)%len(fuzzNames)]
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		in := input(t, p)
		file, err := r.ReadFile(in)
		if err != nil {
			return
		}
		if file.ContentBytes > max {
			t.Fatalf("read %d bytes of content, max %d", file.ContentBytes, max)
		}
		if len(file.Requests) != len(file.Offsets) {
			t.Fatalf("%d requests, %d offsets", len(file.Requests), len(file.Offsets))
		}
		var sum int64
		prev := int64(-1)
		for i, req := range file.Requests {
			if file.Offsets[i] <= prev && len(req) > 0 {
				t.Fatalf("offset %d after %d", file.Offsets[i], prev)
			}
			prev = file.Offsets[i]
			sum += int64(len(req))
		}
		if sum != file.ProtoBytes {
			t.Fatalf("requests hold %d bytes, ProtoBytes %d", sum, file.ProtoBytes)
		}
	})
}

var fuzzNames = []string{"f.binpb", "f.pb", "f.binpb.gz", "f.binpb.zst", "f.json", "f.json.gz"}
