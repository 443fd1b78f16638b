package lake

import (
	"math/rand/v2"
	"testing"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// FuzzLogRows appends arbitrary bytes to a batch that already holds rows.
// It must not panic; a refused request must leave the batch exactly as it
// was; an accepted one must add as many rows as otlpwire counts records.
func FuzzLogRows(f *testing.F) {
	for seed := range uint64(6) {
		b := synth.Random(rand.New(rand.NewPCG(seed, 2)), otlpwire.SignalLogs, synth.Order(seed%2))
		if len(b) < 2048 { // large seeds stall the fuzzer's minimizer
			f.Add(b)
		}
	}
	f.Add(synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 1}))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	base := synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var rows LogRows
		if err := rows.AppendLogs(base); err != nil {
			t.Fatal(err)
		}
		n, ncols := rows.Len(), len(rows.Columns())
		err := rows.AppendLogs(b)
		if err != nil {
			if rows.Len() != n || len(rows.Columns()) != ncols {
				t.Fatalf("refused request changed the batch: %d rows, %d columns; want %d, %d", rows.Len(), len(rows.Columns()), n, ncols)
			}
			return
		}
		want, cerr := otlpwire.LogsRequest(b).LogRecordCount()
		if cerr != nil {
			t.Fatalf("AppendLogs accepted what LogRecordCount refuses: %v", cerr)
		}
		if rows.Len() != n+want {
			t.Fatalf("%d rows added, request has %d records", rows.Len()-n, want)
		}
	})
}

// FuzzSpanRows is FuzzLogRows for spans.
func FuzzSpanRows(f *testing.F) {
	// Random spans are larger than log records: scan more seeds for six
	// small ones.
	for seed, added := uint64(0), 0; seed < 64 && added < 6; seed++ {
		b := synth.Random(rand.New(rand.NewPCG(seed, 2)), otlpwire.SignalTraces, synth.Order(seed%2))
		if len(b) > 0 && len(b) < 2048 { // large seeds stall the fuzzer's minimizer
			f.Add(b)
			added++
		}
	}
	f.Add(synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 1}))
	f.Add([]byte{0x0a, 0x02, 0x12, 0x00})
	base := synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		var rows SpanRows
		if err := rows.AppendTraces(base); err != nil {
			t.Fatal(err)
		}
		n, ncols := rows.Len(), len(rows.Columns())
		err := rows.AppendTraces(b)
		if err != nil {
			if rows.Len() != n || len(rows.Columns()) != ncols {
				t.Fatalf("refused request changed the batch: %d rows, %d columns; want %d, %d", rows.Len(), len(rows.Columns()), n, ncols)
			}
			return
		}
		want, cerr := otlpwire.TracesRequest(b).SpanCount()
		if cerr != nil {
			t.Fatalf("AppendTraces accepted what SpanCount refuses: %v", cerr)
		}
		if rows.Len() != n+want {
			t.Fatalf("%d rows added, request has %d spans", rows.Len()-n, want)
		}
	})
}

// FuzzParquet writes arbitrary logs or traces requests all the way to
// Parquet with a column limit of 4, so most requests overflow: wide
// schemas, many keys of one name after normalization, mixed types, deep
// values. Append may refuse a request; an accepted one must be written
// without error or panic, and read back with as many rows as it has
// records.
func FuzzParquet(f *testing.F) {
	for seed := range uint64(4) {
		for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces} {
			b := synth.Random(rand.New(rand.NewPCG(seed, 5)), sig, synth.Order(seed%2))
			if len(b) < 4096 {
				f.Add(sig == otlpwire.SignalTraces, b)
			}
		}
	}
	f.Add(false, synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 3}))
	f.Add(true, synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 3}))
	f.Fuzz(func(t *testing.T, traces bool, b []byte) {
		sig, count := otlpwire.SignalLogs, func(b []byte) (int, error) { return otlpwire.LogsRequest(b).LogRecordCount() }
		if traces {
			sig, count = otlpwire.SignalTraces, func(b []byte) (int, error) { return otlpwire.TracesRequest(b).SpanCount() }
		}
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.MaxAttributeColumns = 4
		w := newTestWriter(t, cfg)
		n, err := w.Append(sig, "t", b)
		if err != nil {
			return
		}
		if want, _ := count(b); n != want {
			t.Fatalf("appended %d rows, request has %d records", n, want)
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("flush: %v", err)
		}
		rows := 0
		for _, lf := range readLake(t, root) {
			rows += len(lf.rows)
			attrCols := 0
			for _, m := range lf.columns {
				if m.Type != overflowType {
					attrCols++
				}
			}
			if attrCols > 4 {
				t.Fatalf("%d attribute columns, limit 4", attrCols)
			}
		}
		if rows != n {
			t.Fatalf("read back %d rows, wrote %d", rows, n)
		}
	})
}

// FuzzParquetV2 is FuzzParquet for schema version 2: an accepted request
// is written without error or panic, and read back, maps, events and
// links included, with as many rows as it has records, every file with
// the same schema. A refused one leaves the batch's pair and nested lists
// as they were.
func FuzzParquetV2(f *testing.F) {
	for seed := range uint64(4) {
		for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces} {
			b := synth.Random(rand.New(rand.NewPCG(seed, 5)), sig, synth.Order(seed%2))
			if len(b) < 4096 {
				f.Add(sig == otlpwire.SignalTraces, b)
			}
		}
	}
	f.Add(false, synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 3}))
	f.Add(true, synth.Generate(otlpwire.SignalTraces, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 3}))
	f.Fuzz(func(t *testing.T, traces bool, b []byte) {
		sig, count := otlpwire.SignalLogs, func(b []byte) (int, error) { return otlpwire.LogsRequest(b).LogRecordCount() }
		if traces {
			sig, count = otlpwire.SignalTraces, func(b []byte) (int, error) { return otlpwire.TracesRequest(b).SpanCount() }
		}
		root := t.TempDir()
		cfg := testConfig(root)
		cfg.SchemaVersion = 2
		w := newTestWriter(t, cfg)
		n, err := w.Append(sig, "t", b)
		if err != nil {
			bt := w.batches[batchKey{sig, "t"}]
			if bt != nil && (len(bt.spans.pairs)+len(bt.logs.pairs)+len(bt.spans.events)+len(bt.spans.links) != 0) {
				t.Fatalf("refused request left pairs or nested rows behind")
			}
			return
		}
		if want, _ := count(b); n != want {
			t.Fatalf("appended %d rows, request has %d records", n, want)
		}
		if err := w.Flush(); err != nil {
			t.Fatalf("flush: %v", err)
		}
		if n == 0 {
			return
		}
		rows := 0
		if traces {
			rows = len(readV2[v2Span](t, root, "traces"))
		} else {
			rows = len(readV2[v2Log](t, root, "logs"))
		}
		if rows != n {
			t.Fatalf("read back %d rows, wrote %d", rows, n)
		}
	})
}
