package lakeread

import (
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Fresh gives what the lake's files do not hold yet: the requests
// acknowledged (spooled) whose Parquet files are not in place. The lake
// loader (lakeload.Loader) is one.
type Fresh interface {
	// Fresh calls fn with the payload (an OTLP export request of signal
	// sig, valid only during fn) of each such request of tenant and
	// returns the lake's high-water mark: every file of spool records up
	// to through is in place, and the records of files past it (their
	// DataFile.First > through) were given to fn.
	Fresh(ctx context.Context, sig otlpwire.Signal, tenant string, fn func(payload []byte) error) (through uint64, err error)
}

// fresh calls fn with each fresh request of the query's tenant and bounds
// the query's files to those the requests do not cover. Without a Fresh
// source it does nothing.
func (q *fileQuery) fresh(ctx context.Context, fn func(payload []byte) error) error {
	if q.r.cfg.Fresh == nil {
		return nil
	}
	through, err := q.r.cfg.Fresh.Fresh(ctx, q.signal, q.tenant, fn)
	if err != nil {
		what := "spans"
		if q.signal == otlpwire.SignalLogs {
			what = "log records"
		}
		return fmt.Errorf("lakeread: read the %s not in the lake's files yet: %w", what, err)
	}
	q.through, q.bounded = through, true
	return nil
}

// tracesInFresh adds the spans of the traces of byID in an OTLP traces
// request to their Spans, as ResourceSpans holding those spans alone.
func tracesInFresh(payload []byte, byID map[[16]byte]*Spans) error {
	var present [][16]byte // the traces of byID the current resource holds
	return otlpwire.TracesRequest(payload).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(otlpwire.ResourceSpans) error {
			present = present[:0]
			return nil
		},
		Span: func(sp otlpwire.Span) error {
			if id, ok := spanTraceID(sp); ok && byID[id] != nil && !slices.Contains(present, id) {
				present = append(present, id)
			}
			return nil
		},
		ResourceSpansEnd: func(rs otlpwire.ResourceSpans) error {
			for _, id := range present {
				kept, n, err := filterResourceSpans(rs, func(sp []byte) bool {
					tid, _ := spanTraceID(sp)
					return tid == id
				})
				if err != nil {
					return err
				}
				spans := byID[id]
				spans.extra = append(spans.extra, kept)
				spans.size += int64(len(kept))
				spans.n += n
			}
			return nil
		},
	})
}

// spanTraceID returns the trace_id (field 1) of an encoded span.
func spanTraceID(sp []byte) ([16]byte, bool) {
	var id [16]byte
	for len(sp) > 0 {
		num, typ, n := protowire.ConsumeTag(sp)
		if n < 0 {
			return id, false
		}
		sp = sp[n:]
		if num == 1 && typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(sp)
			if m < 0 || len(v) != 16 {
				return id, false
			}
			copy(id[:], v)
			return id, true
		}
		m := protowire.ConsumeFieldValue(num, typ, sp)
		if m < 0 {
			return id, false
		}
		sp = sp[m:]
	}
	return id, false
}

// filterResourceSpans returns a copy of the ResourceSpans rs with only the
// spans keep keeps (scopes left without one dropped), and their number.
func filterResourceSpans(rs otlpwire.ResourceSpans, keep func(span []byte) bool) ([]byte, int, error) {
	var out []byte
	kept := 0
	err := eachRawField(rs, func(num protowire.Number, typ protowire.Type, raw, v []byte) error {
		if num != 2 || typ != protowire.BytesType {
			out = append(out, raw...) // resource, schema_url
			return nil
		}
		var scope []byte
		n := 0
		err := eachRawField(v, func(num protowire.Number, typ protowire.Type, raw, v []byte) error {
			if num == 2 && typ == protowire.BytesType {
				if !keep(v) {
					return nil
				}
				n++
			}
			scope = append(scope, raw...)
			return nil
		})
		if err != nil || n == 0 {
			return err
		}
		kept += n
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendBytes(out, scope)
		return nil
	})
	return out, kept, err
}

// eachRawField calls fn with each field of message b: its number, type,
// whole encoding (tag included) and, for BytesType, its contents.
func eachRawField(b []byte, fn func(protowire.Number, protowire.Type, []byte, []byte) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return protowire.ParseError(m)
		}
		var v []byte
		if typ == protowire.BytesType {
			v, _ = protowire.ConsumeBytes(b[n:])
		}
		if err := fn(num, typ, b[:n+m], v); err != nil {
			return err
		}
		b = b[n+m:]
	}
	return nil
}

// kindNames are the lake's span kind names by OTLP value.
var kindNames = [...]string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER",
	"SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}

func kindName(k int32) string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return strconv.Itoa(int(k))
}

// freshSpan is a span of a fresh request with what searches and names
// look at.
type freshSpan struct {
	service         string
	resource, scope otlpwire.Attributes
	f               *otlpwire.SpanFields
}

// eachFreshSpan calls fn with each span of an OTLP traces request.
func eachFreshSpan(payload []byte, fn func(*freshSpan) error) error {
	var fs freshSpan
	var f otlpwire.SpanFields
	fs.f = &f
	return otlpwire.TracesRequest(payload).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			res, err := rs.Resource()
			if err != nil {
				return err
			}
			svc, err := res.ServiceName()
			if err != nil {
				return err
			}
			fs.service = string(svc)
			if fs.service == "" {
				fs.service = "unknown_service" // as the lake's service_name column
			}
			var rf otlpwire.ResourceFields
			if err := res.Read(&rf); err != nil {
				return err
			}
			fs.resource = rf.Attributes
			return nil
		},
		ScopeSpans: func(ss otlpwire.ScopeSpans) error {
			sc, err := ss.Scope()
			if err != nil {
				return err
			}
			var sf otlpwire.ScopeFields
			if err := sc.Read(&sf); err != nil {
				return err
			}
			fs.scope = sf.Attributes
			return nil
		},
		Span: func(sp otlpwire.Span) error {
			if err := sp.Read(&f); err != nil {
				return err
			}
			return fn(&fs)
		},
	})
}

// searchFresh adds the traces of an OTLP traces request that q matches to
// found.
func (q *Query) searchFresh(payload []byte, found map[[16]byte]*FoundTrace) error {
	return eachFreshSpan(payload, func(fs *freshSpan) error {
		f := fs.f
		if len(f.TraceID) != 16 || q.Service != "" && fs.service != q.Service || q.Operation != "" && string(f.Name) != q.Operation ||
			q.ErrorStatus && f.StatusCode != 2 {
			return nil
		}
		start := time.Unix(0, int64(f.StartTime)).UTC()
		if !q.StartMin.IsZero() && start.Before(q.StartMin) || !q.StartMax.IsZero() && !start.Before(q.StartMax) {
			return nil
		}
		d := time.Duration(int64(f.EndTime) - int64(f.StartTime))
		if q.DurationMin > 0 && d < q.DurationMin || q.DurationMax > 0 && d > q.DurationMax {
			return nil
		}
		for k, want := range q.Attributes {
			if k == "error" && want == "true" && f.StatusCode == 2 {
				continue
			}
			if !hasFreshAttribute(fs, k, want) {
				return nil
			}
		}
		var id [16]byte
		copy(id[:], f.TraceID)
		end := start.Add(d)
		if t := found[id]; t == nil {
			found[id] = &FoundTrace{ID: id, Start: start, End: end}
		} else {
			t.Start, t.End = minTime(t.Start, start), maxTime(t.End, end)
		}
		return nil
	})
}

// hasFreshAttribute reports whether the span, its resource or its scope
// has attribute k whose text (as the lake writes it: ints in decimal,
// doubles shortest, bytes in base64) is want.
func hasFreshAttribute(fs *freshSpan, k, want string) bool {
	for _, attrs := range []otlpwire.Attributes{fs.f.Attributes, fs.resource, fs.scope} {
		v, ok, err := attrs.Get(k)
		if err == nil && ok && valueText(v) == want {
			return true
		}
	}
	return false
}

func valueText(v otlpwire.Value) string {
	switch v.Type() {
	case otlpwire.ValueString:
		return string(v.Str())
	case otlpwire.ValueInt:
		return strconv.FormatInt(v.Int(), 10)
	case otlpwire.ValueDouble:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case otlpwire.ValueBool:
		return strconv.FormatBool(v.Bool())
	case otlpwire.ValueBytes:
		return base64.StdEncoding.EncodeToString(v.Bytes())
	}
	return "" // arrays and maps are not searched in fresh spans
}
