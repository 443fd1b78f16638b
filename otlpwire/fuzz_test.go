package otlpwire_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wirehouse/wirehouse/internal/wirewalk"
	"github.com/wirehouse/wirehouse/otlpwire"

	"github.com/cespare/xxhash/v2"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/synth"
)

// Fuzz targets. Each takes a signal selector and request bytes, seeded with
// real generated requests (testdata/fuzz, written by -update-corpus, plus
// f.Add seeds), and checks: no panic; agreement with pdata wherever pdata
// accepts the input; a bounded number of allocations whatever lengths the
// input claims.
//
//	go test -run='^$' -fuzz=FuzzCount -fuzztime=5m ./otlpwire/

var updateCorpus = flag.Bool("update-corpus", false, "rewrite the committed fuzz seed corpora from internal/synth")

func fuzzSignal(s uint8) otlpwire.Signal { return signals[int(s)%len(signals)] }

// smallSeeds are generated requests under 2 KB, so that the fuzzer's
// minimization of new inputs stays quick; they still cover every field.
func smallSeeds(s otlpwire.Signal, n int) [][]byte {
	var out [][]byte
	for seed := uint64(0); len(out) < n && seed < 10000; seed++ {
		if b := randomRequest(seed, s, synth.Order(seed%2)); len(b) > 0 && len(b) < 2048 {
			out = append(out, b)
		}
	}
	return out
}

func addSeeds(f *testing.F) {
	for i, s := range signals {
		for _, b := range smallSeeds(s, 4) {
			f.Add(uint8(i), b)
		}
	}
}

// pdataAccepts reports whether pdata unmarshals b.
func pdataAccepts(s otlpwire.Signal, b []byte) bool {
	_, ok := pdataCounts(s, b)
	return ok
}

// stricter lists the errors this package reports by design where pdata
// accepts: AnyValue nesting beyond MaxAnyValueDepth; groups, which OTLP
// never uses and pdata skips as unknown fields; and tags whose field number
// is 0 or above 2^29-1, or varints whose tenth byte overflows 64 bits,
// which protobuf forbids (protowire rejects them) and pdata does not check.
func stricter(err error) bool {
	return errors.Is(err, otlpwire.ErrTooDeep) || errors.Is(err, otlpwire.ErrGroup) ||
		errors.Is(err, otlpwire.ErrFieldNumber) || errors.Is(err, otlpwire.ErrOverflow)
}

// allocBound is the most allocations any read of any input may cost: the
// error value and its path.
const allocBound = 8

func FuzzCount(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		got, err := wireCounts(s, b)
		if a := testing.AllocsPerRun(1, func() { countOnly(s, b) }); a > allocBound {
			t.Fatalf("count allocated %v times", a)
		}
		want, ok := pdataCounts(s, b)
		if !ok {
			return
		}
		if err != nil {
			if stricter(err) {
				return
			}
			t.Fatalf("pdata accepts, count fails: %v", err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("counts = %+v, pdata %+v", got, want)
		}
	})
}

func countOnly(s otlpwire.Signal, b []byte) {
	switch s {
	case otlpwire.SignalLogs:
		_, _ = otlpwire.LogsRequest(b).LogRecordCount()
	case otlpwire.SignalTraces:
		_, _ = otlpwire.TracesRequest(b).SpanCount()
	default:
		_, _ = otlpwire.MetricsRequest(b).DataPointCount()
	}
}

func FuzzValidate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		err := s.Validate(b)
		if a := testing.AllocsPerRun(1, func() { _ = s.Validate(b) }); a > allocBound {
			t.Fatalf("Validate allocated %v times", a)
		}
		if err != nil {
			var e *otlpwire.Error
			if !errors.As(err, &e) || e.Offset < 0 || e.Offset > len(b) {
				t.Fatalf("Validate error %v: not an *otlpwire.Error with an offset inside the input", err)
			}
		}
		if pdataAccepts(s, b) && err != nil && !stricter(err) {
			t.Fatalf("pdata accepts, Validate fails: %v", err)
		}
		if err == nil {
			if _, derr := dumpWire(s, b); derr != nil {
				t.Fatalf("Validate passes but reading fails: %v", derr)
			}
			if _, cerr := wireCounts(s, b); cerr != nil {
				t.Fatalf("Validate passes but counting fails: %v", cerr)
			}
		}
	})
}

// FuzzIterate reads every field of every record through the iterators and
// Read methods and compares them with pdata's view.
func FuzzIterate(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		got, err := dumpWire(s, b)
		want, perr := dumpPdata(s, b)
		if perr != nil {
			return
		}
		if err != nil {
			if stricter(err) {
				return
			}
			t.Fatalf("pdata accepts, otlpwire fails: %v", err)
		}
		if mergesSingular(s, b) {
			return // pdata merges repeated singular messages; see doc.go
		}
		if d := diffLines(want, got); d != "" {
			t.Fatal(d)
		}
	})
}

func FuzzSplit(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		sp, err := otlpwire.NewSplitter(otlpwire.WithMaxRecords(1+int(sel)%4), otlpwire.WithMaxBytes(64+int(sel)*8))
		if err != nil {
			t.Fatal(err)
		}
		chunks, serr := splitWith(sp, s, b)
		if !pdataAccepts(s, b) || mergesSingular(s, b) {
			return
		}
		if serr != nil {
			if stricter(serr) {
				return
			}
			t.Fatalf("pdata accepts, split fails: %v", serr)
		}
		var got []string
		for _, c := range chunks {
			if !pdataAccepts(s, c) {
				t.Fatalf("pdata rejects a chunk of an accepted request")
			}
			got = append(got, flatRecords(t, s, c)...)
		}
		if want := flatRecords(t, s, b); !slices.Equal(got, want) {
			t.Fatalf("split changed the records: %d after, %d before", len(got), len(want))
		}
		// Per-resource requests equal pdata's CopyTo of each resource.
		want, err := pdataResourceRequests(s, b)
		if err != nil {
			t.Fatal(err)
		}
		one := wireResourceRequests(t, s, b)
		if len(one) != len(want) {
			t.Fatalf("%d resources, pdata %d", len(one), len(want))
		}
		for i := range one {
			c, err := canonical(s, one[i])
			if err != nil || !bytes.Equal(c, want[i]) {
				t.Fatalf("resource %d: AppendTo output differs from pdata's copy (%v)", i, err)
			}
		}
	})
}

// FuzzHash checks the resource hash against an independent implementation
// of the documented algorithm over pdata's attribute map.
func FuzzHash(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, sel uint8, b []byte) {
		s := fuzzSignal(sel)
		var hashes []uint64
		var herr error
		collect := func(r otlpwire.Resource, err error) {
			if err != nil {
				herr = err
				return
			}
			h, err := r.Hash()
			if err != nil {
				herr = err
				return
			}
			hashes = append(hashes, h)
		}
		switch s {
		case otlpwire.SignalLogs:
			for rl, err := range otlpwire.LogsRequest(b).ResourceLogs() {
				if err != nil {
					herr = err
					break
				}
				collect(rl.Resource())
			}
		case otlpwire.SignalTraces:
			for rs, err := range otlpwire.TracesRequest(b).ResourceSpans() {
				if err != nil {
					herr = err
					break
				}
				collect(rs.Resource())
			}
		default:
			for rm, err := range otlpwire.MetricsRequest(b).ResourceMetrics() {
				if err != nil {
					herr = err
					break
				}
				collect(rm.Resource())
			}
		}
		want, ok := pdataResourceHashes(s, b)
		if !ok || mergesSingular(s, b) {
			return
		}
		if herr != nil {
			if stricter(herr) {
				return
			}
			t.Fatalf("pdata accepts, hashing fails: %v", herr)
		}
		if !slices.Equal(hashes, want) {
			t.Fatalf("hashes %x, reference %x", hashes, want)
		}
	})
}

// ---- reference hash over pdata ----

func refSetHash(m pcommon.Map) (sum, n uint64) {
	for k, v := range m.All() {
		var e []byte
		e = binary.AppendUvarint(e, uint64(len(k)))
		e = append(e, k...)
		e = refValue(e, v)
		sum += xxhash.Sum64(e)
		n++
	}
	return sum, n
}

func refValue(e []byte, v pcommon.Value) []byte {
	switch v.Type() {
	case pcommon.ValueTypeStr:
		e = append(e, byte(otlpwire.ValueString))
		e = binary.AppendUvarint(e, uint64(len(v.Str())))
		return append(e, v.Str()...)
	case pcommon.ValueTypeBytes:
		e = append(e, byte(otlpwire.ValueBytes))
		e = binary.AppendUvarint(e, uint64(v.Bytes().Len()))
		return append(e, v.Bytes().AsRaw()...)
	case pcommon.ValueTypeBool:
		e = append(e, byte(otlpwire.ValueBool))
		if v.Bool() {
			return append(e, 1)
		}
		return append(e, 0)
	case pcommon.ValueTypeInt:
		e = append(e, byte(otlpwire.ValueInt))
		return binary.LittleEndian.AppendUint64(e, uint64(v.Int()))
	case pcommon.ValueTypeDouble:
		e = append(e, byte(otlpwire.ValueDouble))
		return binary.LittleEndian.AppendUint64(e, math.Float64bits(v.Double()))
	case pcommon.ValueTypeSlice:
		e = append(e, byte(otlpwire.ValueArray))
		e = binary.AppendUvarint(e, uint64(v.Slice().Len()))
		for i := 0; i < v.Slice().Len(); i++ {
			e = refValue(e, v.Slice().At(i))
		}
		return e
	case pcommon.ValueTypeMap:
		e = append(e, byte(otlpwire.ValueKVList))
		sum, n := refSetHash(v.Map())
		e = binary.LittleEndian.AppendUint64(e, sum)
		return binary.LittleEndian.AppendUint64(e, n)
	}
	return append(e, byte(otlpwire.ValueEmpty))
}

func refHash(m pcommon.Map) uint64 {
	sum, n := refSetHash(m)
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], sum)
	binary.LittleEndian.PutUint64(buf[8:], n)
	return xxhash.Sum64(buf[:])
}

func pdataResourceHashes(s otlpwire.Signal, b []byte) ([]uint64, bool) {
	var out []uint64
	switch s {
	case otlpwire.SignalLogs:
		ld, err := (&plog.ProtoUnmarshaler{}).UnmarshalLogs(b)
		if err != nil {
			return nil, false
		}
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			out = append(out, refHash(ld.ResourceLogs().At(i).Resource().Attributes()))
		}
	case otlpwire.SignalTraces:
		td, err := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(b)
		if err != nil {
			return nil, false
		}
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			out = append(out, refHash(td.ResourceSpans().At(i).Resource().Attributes()))
		}
	default:
		md, err := (&pmetric.ProtoUnmarshaler{}).UnmarshalMetrics(b)
		if err != nil {
			return nil, false
		}
		for i := 0; i < md.ResourceMetrics().Len(); i++ {
			out = append(out, refHash(md.ResourceMetrics().At(i).Resource().Attributes()))
		}
	}
	return out, true
}

// TestWriteFuzzCorpus writes the committed seed corpora when run with
// -update-corpus: real generated requests of every signal, both orders,
// the benchmark fixture and truncations of it.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to rewrite testdata/fuzz")
	}
	for _, name := range []string{"FuzzCount", "FuzzValidate", "FuzzIterate", "FuzzSplit", "FuzzHash"} {
		dir := filepath.Join("testdata", "fuzz", name)
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		n := 0
		write := func(sel int, b []byte) {
			body := fmt.Sprintf("go test fuzz v1\nuint8(%d)\n[]byte(%q)\n", sel, b)
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed-%03d", n)), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
		for i, s := range signals {
			for _, b := range smallSeeds(s, 12) {
				write(i, b)
			}
			small := synth.Generate(s, synth.Config{Seed: 3, Resources: 2, ScopesPerResource: 1, RecordsPerScope: 2, Order: synth.Order(i % 2)})
			write(i, small)
			write(i, small[:len(small)*2/3])
		}
	}
}

// occurrences counts the fields numbered num in msg, whatever their wire
// type; -1 when msg does not parse.
func occurrences(msg []byte, num int) int {
	c := 0
	for len(msg) > 0 {
		n, typ, k := protowire.ConsumeTag(msg)
		if k < 0 {
			return -1
		}
		m := protowire.ConsumeFieldValue(n, typ, msg[k:])
		if m < 0 {
			return -1
		}
		if int(n) == num {
			c++
		}
		msg = msg[k+m:]
	}
	return c
}

// mergesSingular reports whether b holds a case where pdata's reading
// differs from this package's documented one: a resource or scope message
// given twice in one container (pdata merges them, this package takes the
// last), or a packed repeated scalar split over several fields (pdata keeps
// only the last packed run, this package concatenates them as protobuf
// specifies).
func mergesSingular(s otlpwire.Signal, b []byte) bool {
	found := false
	check := func(msg []byte, nums ...int) {
		for _, n := range nums {
			if occurrences(msg, n) > 1 {
				found = true
			}
		}
	}
	containers := func(rc []byte) {
		check(rc, 1)
		bytesFields(rc, 2, func(sc []byte) { check(sc, 1) })
	}
	switch s {
	case otlpwire.SignalLogs:
		for rl, err := range otlpwire.LogsRequest(b).ResourceLogs() {
			if err != nil {
				break
			}
			containers(rl)
		}
	case otlpwire.SignalTraces:
		for rs, err := range otlpwire.TracesRequest(b).ResourceSpans() {
			if err != nil {
				break
			}
			containers(rs)
		}
	default:
		for rm, err := range otlpwire.MetricsRequest(b).ResourceMetrics() {
			if err != nil {
				break
			}
			containers(rm)
			for sm, err := range rm.ScopeMetrics() {
				if err != nil {
					break
				}
				for m, err := range sm.Metrics() {
					if err != nil {
						break
					}
					var mf otlpwire.MetricFields
					if m.Read(&mf) != nil {
						continue
					}
					for p, err := range mf.HistogramDataPoints().All() {
						if err != nil {
							break
						}
						check(p, 6, 7)
					}
					for p, err := range mf.ExponentialHistogramDataPoints().All() {
						if err != nil {
							break
						}
						bytesFields(p, 8, func(bk []byte) { check(bk, 2) })
						bytesFields(p, 9, func(bk []byte) { check(bk, 2) })
					}
				}
			}
		}
	}
	return found
}

// bytesFields calls f with the value of every length-delimited field num
// of msg, stopping at the first malformed field.
func bytesFields(msg []byte, num protowire.Number, f func([]byte)) {
	_ = eachField(msg, func(n protowire.Number, _ uint64, s []byte) error {
		if n == num && s != nil {
			f(s)
		}
		return nil
	})
}

// FuzzValidatingWalk checks that wirewalk.ValidatingMetrics, a consumer's
// one-pass walk that validates as it reads, accepts exactly what
// MetricsRequest.Validate accepts, and on a valid request reads what the
// plain deep walk reads.
func FuzzValidatingWalk(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, _ uint8, b []byte) {
		verr := otlpwire.MetricsRequest(b).Validate()
		n, werr := wirewalk.ValidatingMetrics(b)
		if (verr == nil) != (werr == nil) {
			t.Fatalf("Validate: %v; the validating walk: %v", verr, werr)
		}
		if verr != nil {
			return
		}
		d, err := wirewalk.Deep(otlpwire.SignalMetrics, b)
		if err != nil || d != n {
			t.Fatalf("deep walk %d (%v), validating walk %d", d, err, n)
		}
	})
}
