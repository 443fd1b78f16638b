package lake

import (
	"bytes"
	"io"
	"strconv"

	"github.com/parquet-go/parquet-go"
)

// logColumns are the fixed columns of a logs file.
func logColumns(r *LogRows) []fileCol {
	return []fileCol{
		int64Col("timestamp", func(i int32) int64 { return r.Time[i] }),
		int64Col("observed_timestamp", func(i int32) int64 { return r.ObservedTime[i] }),
		int32Col("severity_number", r.SeverityNumber),
		stringCol("severity_text", &r.SeverityText, true),
		bodyCol(r),
		idCol("trace_id", &r.TraceID),
		idCol("span_id", &r.SpanID),
		uint32Col("flags", r.Flags),
		stringCol("event_name", &r.EventName, true),
		stringCol("scope_name", &r.ScopeName, true),
		stringCol("scope_version", &r.ScopeVersion, true),
		uint32Col("dropped_attributes_count", r.DroppedAttributes),
	}
}

// spanColumns are the fixed columns of a traces file.
func spanColumns(r *SpanRows) []fileCol {
	return []fileCol{
		idCol("trace_id", &r.TraceID),
		idCol("span_id", &r.SpanID),
		idCol("parent_span_id", &r.ParentSpanID),
		stringCol("trace_state", &r.TraceState, true),
		stringCol("name", &r.Name, true),
		int32Col("kind", r.Kind),
		int64Col("start_time", func(i int32) int64 { return r.StartTime[i] }),
		int64Col("end_time", func(i int32) int64 { return r.EndTime[i] }),
		int64Col("duration", func(i int32) int64 { return r.EndTime[i] - r.StartTime[i] }),
		int32Col("status_code", r.StatusCode),
		stringCol("status_message", &r.StatusMessage, true),
		stringCol("events", &r.Events, false),
		stringCol("links", &r.Links, false),
		uint32Col("flags", r.Flags),
		uint32Col("dropped_attributes_count", r.DroppedAttributes),
		uint32Col("dropped_events_count", r.DroppedEvents),
		uint32Col("dropped_links_count", r.DroppedLinks),
		stringCol("scope_name", &r.ScopeName, true),
		stringCol("scope_version", &r.ScopeVersion, true),
	}
}

// bodyCol is a log's body: a string body as is, any other kind as JSON
// text, null when absent.
func bodyCol(r *LogRows) fileCol {
	return fileCol{name: "body", node: parquet.Optional(parquet.String()), fill: func(_ *encoder, dst []parquet.Value, sel []int32, idx int) []parquet.Value {
		for _, i := range sel {
			if r.BodyKind[i] == 0 {
				dst = append(dst, parquet.Value{})
				dst[len(dst)-1].SetColumnIndex(idx)
				continue
			}
			dst = append(dst, parquet.Value{})
			dst[len(dst)-1] = parquet.ByteArrayValue(r.Body.At(int(i)))
			dst[len(dst)-1].SetDefinitionLevel(1)
			dst[len(dst)-1].SetColumnIndex(idx)
		}
		return dst
	}}
}

// serviceColumn is the column resource attribute service.name gets when it
// is the only column of that name; rows are sorted by it.
const serviceColumn = "resource_service_name"

// writeLogs writes rows sel of r, in that order, as one Parquet file,
// and returns the grams region its writer is to place before the file's
// footer (SpliceRegion); nil if it has none.
func (e *encoder) writeLogs(out io.Writer, r *LogRows, sel []int32) (region []byte, err error) {
	if r.keepPairs {
		e.pageCut = func(rg []int32, i int) bool {
			return !bytes.Equal(r.ServiceName.At(int(rg[i])), r.ServiceName.At(int(rg[i-1])))
		}
		defer func() { e.pageCut = nil }()
		var meta map[string]string
		if !e.noIndexes {
			c := logCounts(r, sel)
			region = MarshalGramsRegion(logGrams(r, sel))
			meta = map[string]string{CountsKey: c.Marshal(), GramsRegionKey: strconv.Itoa(len(region))}
		}
		if !e.logsV3 {
			return region, e.writeRowsV2(out, "logs", 2, logColumnsV2(r, r.Len()), sel, meta, "timestamp")
		}
		if meta == nil {
			meta = map[string]string{}
		}
		cols := logColumnsV2(r, r.Len())
		reserved := map[string]bool{}
		for _, c := range cols {
			reserved[c.name] = true
		}
		k := e.planKeyColumns(&r.attrRows, sel, reserved)
		defer k.done()
		if meta[ColumnsKey], err = k.meta(); err != nil {
			return nil, err
		}
		e.beforeGroup = k.group
		defer func() { e.beforeGroup = nil }()
		return region, e.writeRowsV2(out, "logs", LogsSchemaVersion, logColumnsV3(cols, &r.attrRows, k, sel), sel, meta, "timestamp")
	}
	return nil, e.writeRows(out, "logs", logColumns(r), r.Columns(), r.Len(), sel, "timestamp")
}

// writeSpans writes rows sel of r, in that order, as one Parquet file,
// and returns the trace-id region its writer is to place before the
// file's footer (SpliceRegion); nil if it has none.
func (e *encoder) writeSpans(out io.Writer, r *SpanRows, sel []int32) (region []byte, err error) {
	if r.keepPairs {
		e.pageRows = spanPageRows
		e.groupCut = func(sel []int32, start, end int) int {
			return serviceCut(start, end, func(i int) []byte { return r.ServiceName.At(int(sel[i])) })
		}
		defer func() { e.pageRows, e.groupCut = 0, nil }()
		var meta map[string]string
		if !e.noIndexes {
			e.traceFPs = traceIDsOf(e.traceFPs[:0], len(sel), func(i int) []byte { return r.TraceID.At(int(sel[i])) })
			region = MarshalTraceIDsRegion(e.traceFPs)
			meta = map[string]string{TraceIDsRegionKey: strconv.Itoa(len(region))}
			if c, ok := spanCounts(r, sel); ok {
				meta[SpanCountsKey] = c.Marshal()
			}
		}
		return region, e.writeRowsV2(out, "traces", 2, spanColumnsV2(r, r.Len()), sel, meta, "trace_id", "start_time")
	}
	return nil, e.writeRows(out, "traces", spanColumns(r), r.Columns(), r.Len(), sel, "start_time")
}

// serviceCut is where a row group of a spans file that starts at row
// start ends, at most end: at the first row from start+spanGroupMinRows
// on whose service (service(i)) differs from the row before it, else end.
func serviceCut(start, end int, service func(i int) []byte) int {
	for i := start + spanGroupMinRows; i < end; i++ {
		if !bytes.Equal(service(i), service(i-1)) {
			return i
		}
	}
	return end
}

// writeRowsV2 writes a file of schema version 2 or 3: rows sorted by
// service_name, then the columns named by (for spans trace_id, then
// start_time), with meta as key-value metadata besides the signal and
// the schema version.
func (e *encoder) writeRowsV2(out io.Writer, signal string, version int, cols []fileCol, sel []int32, meta map[string]string, orderBy ...string) error {
	sorting := []parquet.SortingColumn{parquet.Ascending("service_name")}
	for _, c := range orderBy {
		sorting = append(sorting, parquet.Ascending(c))
	}
	kv := map[string]string{
		"wirehouse.signal": signal,
		SchemaVersionKey:   strconv.Itoa(version),
	}
	for k, v := range meta {
		kv[k] = v
	}
	return e.writeFile(out, cols, sel, sorting, kv)
}

func (e *encoder) writeRows(out io.Writer, signal string, fixed []fileCol, cols []*Column, n int, sel []int32, timeCol string) error {
	reserved := make(map[string]bool, len(fixed)+int(numOrigins))
	for _, c := range fixed {
		reserved[c.name] = true
	}
	for _, name := range overflowNames {
		reserved[name] = true
	}
	dyn, meta, err := e.dynamicCols(cols, sel, n, reserved)
	if err != nil {
		return err
	}
	// Rows are sorted by the string service.name then time; the service
	// column is named in sorting_columns only when it holds exactly those
	// strings (present, named resource_service_name, typed string).
	var sorting []parquet.SortingColumn
	for _, c := range dyn {
		if c.name == serviceColumn && c.dyn.Origin == OriginResource && c.dyn.Key == "service.name" && c.mask == 1<<KindString {
			sorting = append(sorting, parquet.NullsFirst(parquet.Ascending(serviceColumn)))
		}
	}
	sorting = append(sorting, parquet.Ascending(timeCol))
	return e.writeFile(out, append(fixed, dyn...), sel, sorting, map[string]string{
		"wirehouse.signal":  signal,
		"wirehouse.columns": meta,
	})
}
