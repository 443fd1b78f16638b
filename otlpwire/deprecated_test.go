package otlpwire_test

import (
	"bytes"
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// TestMigrateDeprecated moves the scope containers of generated requests
// into the deprecated field 1000 of some resource containers (all of them,
// or alongside field 2 in others) and checks that MigrateDeprecated
// followed by otlpwire's counts agrees with the Collector's receiver path,
// pdata's ExportRequest.UnmarshalProto, which migrates; and that a request
// needing nothing is left alone without allocating.
func TestMigrateDeprecated(t *testing.T) {
	for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces, otlpwire.SignalMetrics} {
		for _, mode := range []string{"all", "alongside", "none"} {
			t.Run(sig.String()+"/"+mode, func(t *testing.T) {
				orig := synth.Generate(sig, synth.Config{Seed: 3, Resources: 3, ScopesPerResource: 2, RecordsPerScope: 4})
				req := deprecate(t, orig, mode)
				got, changed := otlpwire.MigrateDeprecated(nil, req)
				if !changed {
					got = req
				}
				if changed != (mode == "all") { // alongside: field 2 wins, nothing to move
					t.Fatalf("changed = %v for %s", changed, mode)
				}
				if otlpwire.NeedsMigration(req) != changed {
					t.Fatalf("NeedsMigration = %v, otlpwire.MigrateDeprecated changed = %v", !changed, changed)
				}
				if changed {
					if orig := synth.Generate(sig, synth.Config{Seed: 3, Resources: 3, ScopesPerResource: 2, RecordsPerScope: 4}); !bytes.Equal(got, orig) {
						t.Errorf("migrated request differs from the one with field 2 (%d bytes, want %d)", len(got), len(orig))
					}
					dst := make([]byte, 0, len(req))
					if a := testing.AllocsPerRun(20, func() { dst, _ = otlpwire.MigrateDeprecated(dst[:0], req) }); a != 0 {
						t.Errorf("MigrateDeprecated into a dst of len(req) spare capacity allocates %.0f times", a)
					}
				}
				if err := sig.Validate(got); err != nil {
					t.Fatalf("Validate after migration: %v", err)
				}
				want, n := collectorCount(t, sig, req), wireCount(t, sig, got)
				if n != want {
					t.Errorf("otlpwire counts %d records after migration, the Collector's receiver %d", n, want)
				}
				if mode == "all" && n != wireCount(t, sig, orig) {
					t.Errorf("migrated count %d, original %d", n, wireCount(t, sig, orig))
				}
			})
		}
	}
	plain := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 2, RecordsPerScope: 3})
	if a := testing.AllocsPerRun(100, func() { otlpwire.MigrateDeprecated(nil, plain) }); a != 0 {
		t.Errorf("MigrateDeprecated of a current request allocates %.0f times", a)
	}
}

// deprecate rewrites req: mode "all" moves every resource container's
// scope containers to field 1000; "alongside" also keeps a copy in field 2
// (pdata then ignores field 1000); "none" returns req as it is.
func deprecate(t testing.TB, req []byte, mode string) []byte {
	if mode == "none" {
		return req
	}
	var out []byte
	for i := 0; i < len(req); {
		n, s, j, err := nextField(req, i)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			out = append(out, req[i:j]...)
			i = j
			continue
		}
		var rc []byte
		for k := 0; k < len(s); {
			m, v, l, err := nextField(s, k)
			if err != nil {
				t.Fatal(err)
			}
			if m == 2 {
				rc = protowire.AppendBytes(protowire.AppendTag(rc, 1000, protowire.BytesType), v)
				if mode == "alongside" {
					rc = append(rc, s[k:l]...)
				}
			} else {
				rc = append(rc, s[k:l]...)
			}
			k = l
		}
		out = protowire.AppendBytes(protowire.AppendTag(out, 1, protowire.BytesType), rc)
		i = j
	}
	return out
}

func collectorCount(t testing.TB, sig otlpwire.Signal, req []byte) int {
	n, ok := collectorCountOK(sig, req)
	if !ok {
		t.Fatal("pdata's ExportRequest refuses the request")
	}
	return n
}

func wireCount(t testing.TB, sig otlpwire.Signal, req []byte) int {
	c, err := wireCounts(sig, req)
	if err != nil {
		t.Fatal(err)
	}
	return c.Total
}

// FuzzMigrate: MigrateDeprecated never panics, and wherever the Collector's
// receiver path (pdata's ExportRequest.UnmarshalProto, which migrates)
// accepts a request, otlpwire's count of the migrated request is the
// Collector's count, but where otlpwire is stricter by design.
func FuzzMigrate(f *testing.F) {
	for i, s := range signals {
		for _, b := range smallSeeds(s, 4) {
			f.Add(uint8(i), b)
			f.Add(uint8(i), deprecate(f, b, "all"))
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		m, changed := otlpwire.MigrateDeprecated(nil, b)
		if need := otlpwire.NeedsMigration(b); changed && !need {
			t.Fatal("MigrateDeprecated changed a request otlpwire.NeedsMigration passed")
		} else if need && !changed && s.Validate(b) == nil {
			t.Fatal("NeedsMigration, but otlpwire.MigrateDeprecated left a valid request unchanged")
		}
		if !changed {
			if len(m) != 0 {
				t.Fatal("unchanged, but appended")
			}
			m = b
		} else if len(m) > len(b) {
			t.Fatalf("migrated request of %d bytes is longer than the %d-byte original", len(m), len(b))
		}
		want, ok := collectorCountOK(s, b)
		if !ok {
			return
		}
		if err := s.Validate(m); err != nil {
			if stricter(err) {
				return
			}
			t.Fatalf("the Collector accepts, Validate of the migrated request fails: %v", err)
		}
		if n := wireCount(t, s, m); n != want {
			t.Fatalf("otlpwire counts %d after migration, the Collector %d", n, want)
		}
	})
}

// collectorCountOK is collectorCount that reports pdata's refusal as false.
func collectorCountOK(s otlpwire.Signal, b []byte) (int, bool) {
	switch s {
	case otlpwire.SignalLogs:
		r := plogotlp.NewExportRequest()
		if r.UnmarshalProto(b) != nil {
			return 0, false
		}
		return r.Logs().LogRecordCount(), true
	case otlpwire.SignalTraces:
		r := ptraceotlp.NewExportRequest()
		if r.UnmarshalProto(b) != nil {
			return 0, false
		}
		return r.Traces().SpanCount(), true
	}
	r := pmetricotlp.NewExportRequest()
	if r.UnmarshalProto(b) != nil {
		return 0, false
	}
	return r.Metrics().DataPointCount(), true
}

// nextField reads the field at b[i:]: its number, its value's bytes when
// it is length-delimited, and the offset after it.
func nextField(b []byte, i int) (protowire.Number, []byte, int, error) {
	num, typ, n := protowire.ConsumeTag(b[i:])
	if n < 0 {
		return 0, nil, 0, protowire.ParseError(n)
	}
	m := protowire.ConsumeFieldValue(num, typ, b[i+n:])
	if m < 0 {
		return 0, nil, 0, protowire.ParseError(m)
	}
	var v []byte
	if typ == protowire.BytesType {
		v, _ = protowire.ConsumeBytes(b[i+n:])
	}
	return num, v, i + n + m, nil
}
