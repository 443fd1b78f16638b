package lake

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// TestStagedFitsRegisters holds staged, which Column.stage returns for
// every attribute, to four fields and four words: the compiler keeps such
// a struct in registers, and copies a larger one through memory, where
// the reload of a value just stored stalls (BenchmarkLogsToRows 4–5 %
// slower with kind and vt as two fields of their own, five in all).
func TestStagedFitsRegisters(t *testing.T) {
	if size, words := unsafe.Sizeof(staged{}), 4*unsafe.Sizeof(uintptr(0)); size > words {
		t.Errorf("staged is %d bytes, more than four words (%d)", size, words)
	}
	if n := reflect.TypeFor[staged]().NumField(); n > 4 {
		t.Errorf("staged has %d fields, more than four", n)
	}
}

// TestOrderWithoutIDs: the order of a batch sorted without trace ids
// (timeKey) is the order sortKey gives the same rows with empty ids, on
// random hours, services and times with many ties.
func TestOrderWithoutIDs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	for round := range 50 {
		n := 1 + rng.IntN(2000)
		var services, ids Strings
		times := make([]int64, n)
		hours := make([]int64, n)
		for r := range n {
			services.Append(fmt.Appendf(nil, "svc-%d", rng.IntN(5)))
			ids.Append(nil)
			times[r] = int64(rng.IntN(50))
			hours[r] = int64(rng.IntN(3))
		}
		hour := func(r int32) int64 { return hours[r] }
		var a, b encoder
		keysA, selA := a.order(n, &services, nil, times, hour)
		keysB, selB := b.order(n, &services, &ids, times, hour)
		if !slices.Equal(selA, selB) || !slices.Equal(keysA, keysB) {
			t.Fatalf("round %d (%d rows): without ids %v, with empty ids %v", round, n, selA, selB)
		}
	}
}

// BenchmarkOrder sorts a batch of 30,000 log rows (5 services, 3 hours,
// times with ties) the two ways order can: impl=timekey without trace
// ids, as logs are sorted, and impl=sortkey through the five-field
// sortKey with empty ids, the way logs were sorted before timeKey.
func BenchmarkOrder(b *testing.B) {
	const n = 30000
	rng := rand.New(rand.NewPCG(7, 28))
	var services, ids Strings
	times := make([]int64, n)
	hours := make([]int64, n)
	for r := range n {
		services.Append(fmt.Appendf(nil, "svc-%d", r/6000))
		ids.Append(nil)
		times[r] = int64(rng.IntN(1e6))
		hours[r] = int64(r / 10000)
	}
	hour := func(r int32) int64 { return hours[r] }
	for _, impl := range []string{"timekey", "sortkey"} {
		b.Run("impl="+impl, func(b *testing.B) {
			var e encoder
			idsOf := &ids
			if impl == "timekey" {
				idsOf = nil
			}
			for b.Loop() {
				e.order(n, &services, idsOf, times, hour)
			}
		})
	}
}

// appendDirect and assignInPlace are the two ways a fill can add a value
// (see fillFunc), kept out of line as a fill's loop body is.
//
//go:noinline
func appendDirect(dst []parquet.Value, b []byte) []parquet.Value {
	dst = append(dst, parquet.ByteArrayValue(b))
	dst[len(dst)-1].SetDefinitionLevel(1)
	return dst
}

//go:noinline
func assignInPlace(dst []parquet.Value, b []byte) []parquet.Value {
	dst = append(dst, parquet.Value{})
	dst[len(dst)-1] = parquet.ByteArrayValue(b)
	dst[len(dst)-1].SetDefinitionLevel(1)
	return dst
}

// BenchmarkAppendValue appends 4,096 byte-array values to a reused slice
// both ways: impl=append appends ByteArrayValue's result, impl=assign
// grows the slice by a zero Value and assigns into it, as every fill does.
func BenchmarkAppendValue(b *testing.B) {
	keys := make([][]byte, 64)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "attribute.key.%02d", i)
	}
	for _, impl := range []struct {
		name string
		add  func([]parquet.Value, []byte) []parquet.Value
	}{{"append", appendDirect}, {"assign", assignInPlace}} {
		b.Run("impl="+impl.name, func(b *testing.B) {
			dst := make([]parquet.Value, 0, 4096)
			for b.Loop() {
				dst = dst[:0]
				for i := range 4096 {
					dst = impl.add(dst, keys[i&63])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/4096, "ns/value")
		})
	}
}
