package lake

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/parquet-go/parquet-go"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// benchLogs is the seed-shaped workload: synth.SeedLogs (bodies of about
// 47 bytes, ~15 attributes per log) in 4 resources × 2 scopes, 2,000
// records.
func benchLogs() []byte {
	return synth.SeedLogs(synth.Config{Seed: 42, Resources: 4, ScopesPerResource: 2, TotalRecords: 2000})
}

// attrsPerLog counts resource + scope + record attributes per record with
// pdata, reported beside the benchmark so the workload's shape is visible.
func attrsPerLog(b *testing.B, body []byte) float64 {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		b.Fatal(err)
	}
	total, n := 0, 0
	rls := req.Logs().ResourceLogs()
	for i := range rls.Len() {
		ra := rls.At(i).Resource().Attributes().Len()
		for j := range rls.At(i).ScopeLogs().Len() {
			sl := rls.At(i).ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				total += ra + sl.Scope().Attributes().Len() + sl.LogRecords().At(k).Attributes().Len()
				n++
			}
		}
	}
	return float64(total) / float64(n)
}

// BenchmarkLogsToRows turns a decompressed ExportLogsServiceRequest into
// rows, on one core (GOMAXPROCS=1 inside the benchmark).
//
//   - impl=wirehouse: LogRows.AppendLogs into a reused batch (columns and
//     arenas), every attribute typed; ids kept as bytes, attribute keys
//     interned (a column is named once per key and file, when written).
//   - impl=pdata: the same work with pdata: unmarshal, then one
//     map[string]any per record filled with Map.Range over resource, scope
//     and record attributes, ids kept as their byte arrays and column
//     names looked up in a map kept across requests (named once per key).
//   - impl=pdata-seed: what the seed's ingester does on top of that: ids
//     hex-encoded into strings and every attribute's column name derived
//     again (two allocations per attribute). It is the seed's figure, not
//     a fair baseline.
//
// gc/op is the number of garbage collections per iteration (2,000 logs),
// as the seed reported GC counts per run.
func BenchmarkLogsToRows(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	body := benchLogs()
	n, err := otlpwire.LogsRequest(body).LogRecordCount()
	if err != nil {
		b.Fatal(err)
	}
	run := func(b *testing.B, fn func()) {
		var ms0, ms1 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		b.ReportAllocs()
		for b.Loop() {
			fn()
		}
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N*n), "B/log")
		b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/op")
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "logs/s")
		b.ReportMetric(attrsPerLog(b, body), "attrs/log")
	}
	b.Run("impl=wirehouse", func(b *testing.B) {
		var rows LogRows
		run(b, func() {
			rows.Reset()
			if err := rows.AppendLogs(body); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("impl=pdata", func(b *testing.B) {
		names := newPdataNames()
		sink := 0
		run(b, func() { sink += len(pdataRows(b, body, names)) })
	})
	b.Run("impl=pdata-seed", func(b *testing.B) {
		sink := 0
		run(b, func() { sink += len(pdataRows(b, body, nil)) })
	})
}

// pdataNames caches column names per origin and key, as an ingester that
// names a key once would.
type pdataNames [numOrigins]map[string]string

func newPdataNames() *pdataNames {
	var n pdataNames
	for i := range n {
		n[i] = map[string]string{}
	}
	return &n
}

func (n *pdataNames) name(o Origin, key string) string {
	if c, ok := n[o][key]; ok {
		return c
	}
	c := ColumnName(o, []byte(key))
	n[o][key] = c
	return c
}

// pdataRows builds one map row per record. With names nil it does what
// the seed's ingester does (hex ids, every column name derived again);
// with names, the fair version (ids as bytes, names cached).
func pdataRows(b *testing.B, body []byte, names *pdataNames) []map[string]any {
	req := plogotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		b.Fatal(err)
	}
	var rows []map[string]any
	rls := req.Logs().ResourceLogs()
	for i := range rls.Len() {
		rl := rls.At(i)
		for j := range rl.ScopeLogs().Len() {
			sl := rl.ScopeLogs().At(j)
			for k := range sl.LogRecords().Len() {
				lr := sl.LogRecords().At(k)
				row := map[string]any{
					"timestamp":          int64(lr.Timestamp()),
					"observed_timestamp": int64(lr.ObservedTimestamp()),
					"severity_number":    int32(lr.SeverityNumber()),
					"severity_text":      lr.SeverityText(),
					"body":               lr.Body().AsString(),
					"flags":              uint32(lr.Flags()),
					"event_name":         lr.EventName(),
					"scope_name":         sl.Scope().Name(),
					"scope_version":      sl.Scope().Version(),
				}
				if names == nil {
					row["trace_id"], row["span_id"] = lr.TraceID().String(), lr.SpanID().String()
				} else {
					t, sp := lr.TraceID(), lr.SpanID()
					row["trace_id"], row["span_id"] = t[:], sp[:]
				}
				put := func(o Origin) func(string, pcommon.Value) bool {
					if names == nil {
						return func(key string, v pcommon.Value) bool {
							row[ColumnName(o, []byte(key))] = v.AsRaw()
							return true
						}
					}
					return func(key string, v pcommon.Value) bool {
						row[names.name(o, key)] = v.AsRaw()
						return true
					}
				}
				rl.Resource().Attributes().Range(put(OriginResource))
				sl.Scope().Attributes().Range(put(OriginScope))
				lr.Attributes().Range(put(OriginRecord))
				rows = append(rows, row)
			}
		}
	}
	return rows
}

// gzipped returns b gzip-compressed, as the seed's input files are.
func gzipped(b *testing.B, body []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(body); err != nil {
		b.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkLogsToParquet is the whole path on one core, from the bytes of
// a gzipped OTLP file to the bytes of a Parquet file: gunzip into a reused
// buffer, LogRows.AppendLogs, sort by (service, time), encode with zstd,
// dictionaries, statistics and the trace_id bloom filter. Each iteration
// writes one file of 100,000 logs (benchFiles requests of the seed
// workload). impl=pdata is pdataParquet's map-based path, from the fair
// pdataRows (ids as bytes, column names cached).
func BenchmarkLogsToParquet(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	files, n := gzippedFiles(b, synth.SeedLogs)
	// impl=wirehouse writes schema version 3 (the default) with its
	// counts and body index, impl=wirehouse-noindex without them,
	// impl=wirehouse-v2 version 2 (every attribute in the map) and
	// impl=wirehouse-v1 version 1, the layouts of earlier releases.
	for _, v := range []string{"wirehouse", "wirehouse-noindex", "wirehouse-v2", "wirehouse-v1"} {
		b.Run("impl="+v, func(b *testing.B) {
			rows := LogRows{}
			rows.keepPairs = v != "wirehouse-v1"
			benchParquet(b, files, n, "log", rows.Reset, rows.AppendLogs, func(enc *encoder, out io.Writer) error {
				enc.noIndexes = v == "wirehouse-noindex"
				enc.logsV3 = v == "wirehouse" || v == "wirehouse-noindex"
				_, sel := enc.order(rows.Len(), &rows.ServiceName, nil, rows.Time, func(int32) int64 { return 0 })
				_, err := enc.writeLogs(out, &rows, sel)
				return err
			})
		})
	}
	b.Run("impl=pdata", func(b *testing.B) {
		names := newPdataNames()
		var (
			zr  gzip.Reader
			buf bytes.Buffer
			out bytes.Buffer
			ms0 runtime.MemStats
			ms1 runtime.MemStats
		)
		runtime.ReadMemStats(&ms0)
		b.ReportAllocs()
		for b.Loop() {
			var rows []map[string]any
			for _, f := range files {
				if err := zr.Reset(bytes.NewReader(f)); err != nil {
					b.Fatal(err)
				}
				buf.Reset()
				if _, err := buf.ReadFrom(&zr); err != nil {
					b.Fatal(err)
				}
				rows = append(rows, pdataRows(b, buf.Bytes(), names)...)
			}
			out.Reset()
			pdataParquet(b, rows, &out)
		}
		runtime.ReadMemStats(&ms1)
		b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "logs/s")
		b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N*n), "B/log")
		b.ReportMetric(float64(out.Len())/float64(n), "parquetB/log")
		b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/op")
	})
}

// pdataParquet writes rows built by pdataRows as one Parquet file the way
// a map-based ingester does: a schema from the union of the keys (each
// key typed by its first value; arrays and maps as JSON text), rows sorted
// by (service, time), parquet-go's map writer, the same zstd codec and
// trace_id bloom filter.
func pdataParquet(b *testing.B, rows []map[string]any, out io.Writer) {
	types := map[string]parquet.Node{}
	for _, row := range rows {
		for k, v := range row {
			switch x := v.(type) {
			case []any, map[string]any:
				j, err := json.Marshal(x)
				if err != nil {
					b.Fatal(err)
				}
				row[k] = string(j)
				v = row[k]
			}
			if _, ok := types[k]; ok {
				continue
			}
			switch v.(type) {
			case int64:
				types[k] = parquet.Optional(parquet.Int(64))
			case int32:
				types[k] = parquet.Optional(parquet.Int(32))
			case uint32:
				types[k] = parquet.Optional(parquet.Uint(32))
			case float64:
				types[k] = parquet.Optional(parquet.Leaf(parquet.DoubleType))
			case bool:
				types[k] = parquet.Optional(parquet.Leaf(parquet.BooleanType))
			case []byte:
				types[k] = parquet.Optional(parquet.Leaf(parquet.ByteArrayType))
			default:
				types[k] = parquet.Optional(parquet.String())
			}
		}
	}
	group := parquet.Group{}
	for k, n := range types {
		group[k] = parquet.Compressed(n, zstdCodec)
	}
	slices.SortFunc(rows, func(x, y map[string]any) int {
		sx, _ := x["resource_service_name"].(string)
		sy, _ := y["resource_service_name"].(string)
		if c := strings.Compare(sx, sy); c != 0 {
			return c
		}
		return cmp.Compare(x["timestamp"].(int64), y["timestamp"].(int64))
	})
	w := parquet.NewGenericWriter[any](out, parquet.NewSchema("pdata", group),
		parquet.BloomFilters(parquet.SplitBlockFilter(10, "trace_id")))
	batch := make([]any, 0, 1024)
	for i, row := range rows {
		batch = append(batch, row)
		if len(batch) == cap(batch) || i == len(rows)-1 {
			if _, err := w.Write(batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSpansToParquet is BenchmarkLogsToParquet for spans: gzipped
// synth.Traces requests (service graphs with events, links, exceptions) to
// the bytes of one Parquet file of 100,000 spans, on one core.
func BenchmarkSpansToParquet(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	files, n := gzippedFiles(b, synth.Traces)
	// impl=wirehouse writes schema version 2 (the default,
	// schema_v2.go), impl=wirehouse-v1 version 1: the bound is version 2
	// at most 15 % more CPU per span than version 1, in one run.
	for _, v2 := range []bool{true, false} {
		name := "impl=wirehouse"
		if !v2 {
			name = "impl=wirehouse-v1"
		}
		b.Run(name, func(b *testing.B) {
			rows := SpanRows{}
			rows.keepPairs = v2
			benchParquet(b, files, n, "span", rows.Reset, rows.AppendTraces, func(enc *encoder, out io.Writer) error {
				var ids *Strings
				if v2 {
					ids = &rows.TraceID // as the writer orders them
				}
				_, sel := enc.order(rows.Len(), &rows.ServiceName, ids, rows.StartTime, func(int32) int64 { return 0 })
				_, err := enc.writeSpans(out, &rows, sel)
				return err
			})
		})
	}
}

// gzippedFiles generates benchFiles requests of 2,000 records (4
// resources × 2 scopes) with gen and gzips each, as the seed's input files
// are; n is their records (synth puts exactly TotalRecords in a request).
func gzippedFiles(b *testing.B, gen func(synth.Config) []byte) (files [][]byte, n int) {
	for i := range benchFiles {
		files = append(files, gzipped(b, gen(synth.Config{Seed: int64(42 + i), Resources: 4, ScopesPerResource: 2, TotalRecords: 2000})))
	}
	return files, benchFiles * 2000
}

// benchFiles is how many gzipped requests of 2,000 records the Parquet
// benchmarks read per iteration.
const benchFiles = 50

// benchParquet runs one wirehouse Parquet benchmark: each iteration resets
// the batch, gunzips every file into a reused buffer and appends it, then
// writes one file with write. It reports <unit>s/s, B/<unit> and
// parquetB/<unit> for the n records of files.
func benchParquet(b *testing.B, files [][]byte, n int, unit string, reset func(), add func([]byte) error, write func(*encoder, io.Writer) error) {
	var (
		enc      = encoder{rowGroupRows: 128 << 10}
		zr       gzip.Reader
		buf, out bytes.Buffer
		ms0, ms1 runtime.MemStats
	)
	runtime.ReadMemStats(&ms0)
	b.ReportAllocs()
	for b.Loop() {
		reset()
		for _, f := range files {
			if err := zr.Reset(bytes.NewReader(f)); err != nil {
				b.Fatal(err)
			}
			buf.Reset()
			if _, err := buf.ReadFrom(&zr); err != nil {
				b.Fatal(err)
			}
			if err := add(buf.Bytes()); err != nil {
				b.Fatal(err)
			}
		}
		out.Reset()
		if err := write(&enc, &out); err != nil {
			b.Fatal(err)
		}
	}
	runtime.ReadMemStats(&ms1)
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), unit+"s/s")
	b.ReportMetric(float64(ms1.TotalAlloc-ms0.TotalAlloc)/float64(b.N*n), "B/"+unit)
	b.ReportMetric(float64(out.Len())/float64(n), "parquetB/"+unit)
	b.ReportMetric(float64(ms1.NumGC-ms0.NumGC)/float64(b.N), "gc/op")
}

// nameSink keeps the names BenchmarkColumnName makes, as an ingester keeps
// them, so that the compiler cannot build them on the stack.
var nameSink string

// BenchmarkColumnName is seed 001's attribute-key naming benchmark
// (BenchmarkPrefixAttributeRowKey: short, medium and long keys, and a
// batch of ten): impl=wirehouse is ColumnName; impl=seed is the seed's
// first version, strings.ReplaceAll of the dots then a concatenation with
// the prefix (two allocations). wirehouse names a column once per key and
// file, when it writes the file, not per attribute as the seed did, so
// this cost is not on its per-record path at all.
func BenchmarkColumnName(b *testing.B) {
	seed := func(o Origin, key string) string {
		if strings.HasPrefix(key, "_") {
			return strings.ReplaceAll(key, ".", "_")
		}
		return prefixes[o] + strings.ReplaceAll(key, ".", "_")
	}
	batch := []string{"service.name", "http.method", "http.route", "http.status_code", "user_agent.original",
		"k8s.pod.name", "k8s.namespace.name", "host.name", "thread.name", "code.function"}
	cases := []struct {
		name string
		keys []string
	}{
		{"short_no_dots", []string{"status"}},
		{"medium_one_dot", []string{"http.method"}},
		{"long_many_dots", []string{"k8s.pod.label.app.kubernetes.io.name"}},
		{"batch", batch},
	}
	keyBytes := func(keys []string) [][]byte {
		out := make([][]byte, len(keys))
		for i, k := range keys {
			out[i] = []byte(k)
		}
		return out
	}
	for _, c := range cases {
		kb := keyBytes(c.keys)
		b.Run(c.name+"/impl=wirehouse", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for _, k := range kb {
					nameSink = ColumnName(OriginRecord, k)
					n += len(nameSink)
				}
			}
			b.ReportMetric(float64(b.N*len(kb))/b.Elapsed().Seconds(), "attrs/s")
		})
		b.Run(c.name+"/impl=seed", func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				for _, k := range c.keys {
					nameSink = seed(OriginRecord, k)
					n += len(nameSink)
				}
			}
			b.ReportMetric(float64(b.N*len(c.keys))/b.Elapsed().Seconds(), "attrs/s")
		})
	}
}

// BenchmarkLogIndexes: what the counts and the body index of a logs file
// cost to make, alone (logCounts and logGrams over the rows of
// BenchmarkLogsToParquet, in the file's order), in ns a log: compare it
// with that benchmark's ns a log (1e9 / logs/s), or with a server's
// ingest CPU a log (scripts/compare-log-servers.sh).
func BenchmarkLogIndexes(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rows := LogRows{}
	rows.keepPairs = true
	for i := range benchFiles { // gzippedFiles' requests
		if err := rows.AppendLogs(synth.SeedLogs(synth.Config{Seed: int64(42 + i), Resources: 4, ScopesPerResource: 2, TotalRecords: 2000})); err != nil {
			b.Fatal(err)
		}
	}
	n := rows.Len()
	enc := encoder{rowGroupRows: 128 << 10}
	_, sel := enc.order(rows.Len(), &rows.ServiceName, nil, rows.Time, func(int32) int64 { return 0 })
	for _, index := range []string{"counts", "grams"} {
		b.Run(index, func(b *testing.B) {
			size := 0
			for b.Loop() {
				if index == "counts" {
					c := logCounts(&rows, sel)
					size = len(c.Marshal())
				} else {
					g := logGrams(&rows, sel)
					size = len(MarshalGramsRegion(g))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/log")
			b.ReportMetric(float64(size)/float64(n), "B/log")
		})
	}
}
