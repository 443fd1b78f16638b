package lokipush

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
	"google.golang.org/protobuf/encoding/protowire"
)

// Limits are what a push may hold, Loki's limits of the same names.
type Limits struct {
	MaxLineBytes       int           // max_line_size
	MaxLabelNames      int           // max_label_names_per_series
	MaxLabelNameBytes  int           // max_label_name_length
	MaxLabelValueBytes int           // max_label_value_length
	MaxAge             time.Duration // reject_old_samples_max_age
	MaxAhead           time.Duration // creation_grace_period
}

// DefaultLimits are Loki's defaults: lines of 256 KiB, 15 labels a stream,
// names of 1024 bytes and values of 2048, times from a week ago to 10
// minutes ahead.
func DefaultLimits() Limits {
	return Limits{MaxLineBytes: 256 << 10, MaxLabelNames: 15, MaxLabelNameBytes: 1024, MaxLabelValueBytes: 2048,
		MaxAge: 7 * 24 * time.Hour, MaxAhead: 10 * time.Minute}
}

// Validate reports the first limit that is not positive.
func (l Limits) Validate() error {
	switch {
	case l.MaxLineBytes <= 0, l.MaxLabelNames <= 0, l.MaxLabelNameBytes <= 0, l.MaxLabelValueBytes <= 0:
		return fmt.Errorf("lokipush: limits %+v: every size must be positive", l)
	case l.MaxAge <= 0 || l.MaxAhead < 0:
		return fmt.Errorf("lokipush: MaxAge %v and MaxAhead %v: must be positive", l.MaxAge, l.MaxAhead)
	}
	return nil
}

// ErrMalformed is a body that does not decode; errors.Is finds it in
// Proto's and JSON's errors.
var ErrMalformed = errors.New("malformed Loki push request")

// ErrBudget is returned when Decoder.Reserve refuses the memory the
// request's OTLP form needs.
var ErrBudget = errors.New("no memory for the push request")

// Stats counts what a push held.
type Stats struct {
	Entries int    // every entry read
	Refused int    // entries left out
	Reason  string // the first refusal, in Loki's words
}

func (s *Stats) refuse(n int, format string, args ...any) {
	s.Refused += n
	if s.Reason == "" && n > 0 {
		s.Reason = fmt.Sprintf(format, args...)
	}
}

// Decoder turns push bodies into OTLP logs requests. Its scratch space is
// reused from call to call: one goroutine at a time (the receiver pools
// them).
type Decoder struct {
	Limits Limits
	// Now is the clock of the time limits and of the records' observed
	// time (time.Now if nil).
	Now func() time.Time
	// Reserve, if not nil, is asked for the bytes of each stream's OTLP
	// form before they are appended; false stops the call with ErrBudget.
	Reserve func(n int64) bool

	entries []entry
	meta    []kv
	labels  []kv
	hint    []byte
	parser  parser.Parser
	now     int64
}

// entry is an entry kept, its metadata meta[m0:m1].
type entry struct {
	ts     int64
	line   []byte
	m0, m1 int
}

type kv struct{ k, v []byte }

// OTLP field numbers written.
const (
	fRequestResourceLogs = 1
	fRLResource          = 1
	fRLScopeLogs         = 2
	fResourceAttributes  = 1
	fSLLogRecords        = 2
	fLRTime              = 1
	fLRBody              = 5
	fLRAttributes        = 6
	fLRObservedTime      = 11
	fKVKey               = 1
	fKVValue             = 2
	fAnyString           = 1
)

func (d *Decoder) start() {
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	d.now = now().UnixNano()
	if d.parser == nil {
		d.parser = parser.NewParser(parser.Options{})
	}
}

// stream checks a stream's labels (d.labels) and entries (d.entries) and
// appends its ResourceLogs to dst.
func (d *Decoder) stream(dst []byte, st *Stats) ([]byte, error) {
	n := len(d.entries)
	if n == 0 {
		return dst, nil
	}
	if why := d.checkLabels(); why != "" {
		st.refuse(n, "%s", why)
		return dst, nil
	}
	// Entries past the limits are left out.
	kept := d.entries[:0]
	for _, e := range d.entries {
		// The first refusal's reason is written; the others counted.
		switch first := st.Reason == ""; {
		case len(e.line) > d.Limits.MaxLineBytes:
			st.Refused++
			if first {
				st.Reason = fmt.Sprintf("line_too_long: a line of %d bytes is longer than the limit of %d bytes, stream %s", len(e.line), d.Limits.MaxLineBytes, d.labelString())
			}
		case e.ts < d.now-int64(d.Limits.MaxAge):
			st.Refused++
			if first {
				st.Reason = fmt.Sprintf("greater_than_max_sample_age: entry with timestamp %s is older than %v, stream %s", timeText(e.ts), d.Limits.MaxAge, d.labelString())
			}
		case e.ts > d.now+int64(d.Limits.MaxAhead):
			st.Refused++
			if first {
				st.Reason = fmt.Sprintf("too_far_in_future: entry with timestamp %s is more than %v ahead, stream %s", timeText(e.ts), d.Limits.MaxAhead, d.labelString())
			}
		default:
			kept = append(kept, e)
		}
	}
	d.entries = kept
	if len(kept) == 0 {
		return dst, nil
	}
	// Sizes first: each message's length precedes it.
	res := 0
	for _, l := range d.labels {
		res += fieldSize(fResourceAttributes, kvSize(resourceKey(l.k), l.v))
	}
	svc := d.discoverService()
	if svc != nil {
		res += fieldSize(fResourceAttributes, kvSize(serviceName, svc))
	}
	d.hint = d.labelsHint(d.hint[:0], svc != nil)
	res += fieldSize(fResourceAttributes, kvSize(labelsHintKey, d.hint))
	scope := 0
	for _, e := range kept {
		scope += fieldSize(fSLLogRecords, d.recordSize(&e))
	}
	rl := fieldSize(fRLResource, res) + fieldSize(fRLScopeLogs, scope)
	total := fieldSize(fRequestResourceLogs, rl)
	if d.Reserve != nil && !d.Reserve(int64(total)) {
		return dst, ErrBudget
	}
	dst = slices.Grow(dst, total)
	dst = protowire.AppendTag(dst, fRequestResourceLogs, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(rl))
	dst = protowire.AppendTag(dst, fRLResource, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(res))
	for _, l := range d.labels {
		dst = appendKV(dst, fResourceAttributes, resourceKey(l.k), l.v)
	}
	if svc != nil {
		dst = appendKV(dst, fResourceAttributes, serviceName, svc)
	}
	dst = appendKV(dst, fResourceAttributes, labelsHintKey, d.hint)
	dst = protowire.AppendTag(dst, fRLScopeLogs, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(scope))
	for i := range kept {
		e := &kept[i]
		dst = protowire.AppendTag(dst, fSLLogRecords, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(d.recordSize(e)))
		dst = protowire.AppendTag(dst, fLRTime, protowire.Fixed64Type)
		dst = protowire.AppendFixed64(dst, uint64(e.ts))
		dst = protowire.AppendTag(dst, fLRBody, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(fieldSize(fAnyString, len(e.line))))
		dst = protowire.AppendTag(dst, fAnyString, protowire.BytesType)
		dst = protowire.AppendBytes(dst, e.line)
		for _, m := range d.meta[e.m0:e.m1] {
			dst = appendKV(dst, fLRAttributes, m.k, m.v)
		}
		dst = protowire.AppendTag(dst, fLRObservedTime, protowire.Fixed64Type)
		dst = protowire.AppendFixed64(dst, uint64(d.now))
	}
	return dst, nil
}

// timeText is Unix nanoseconds t as RFC 3339.
func timeText(t int64) string { return time.Unix(0, t).UTC().Format(time.RFC3339Nano) }

// recordSize is the size of e's LogRecord.
func (d *Decoder) recordSize(e *entry) int {
	n := 2*(1+8) + fieldSize(fLRBody, fieldSize(fAnyString, len(e.line)))
	for _, m := range d.meta[e.m0:e.m1] {
		n += fieldSize(fLRAttributes, kvSize(m.k, m.v))
	}
	return n
}

// fieldSize is the size of a length-delimited field of n bytes (fields
// numbers below 16: a one-byte tag).
func fieldSize(_ protowire.Number, n int) int { return 1 + protowire.SizeVarint(uint64(n)) + n }

// kvSize is the size of a KeyValue of a string value.
func kvSize(k, v []byte) int {
	return fieldSize(fKVKey, len(k)) + fieldSize(fKVValue, fieldSize(fAnyString, len(v)))
}

func appendKV(dst []byte, field protowire.Number, k, v []byte) []byte {
	dst = protowire.AppendTag(dst, field, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(kvSize(k, v)))
	dst = protowire.AppendTag(dst, fKVKey, protowire.BytesType)
	dst = protowire.AppendBytes(dst, k)
	dst = protowire.AppendTag(dst, fKVValue, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(fieldSize(fAnyString, len(v))))
	dst = protowire.AppendTag(dst, fAnyString, protowire.BytesType)
	return protowire.AppendBytes(dst, v)
}

var serviceName = []byte("service.name")

// LabelsHintKey is the resource attribute that names the resource
// attributes that are Loki stream labels, comma-separated: the hint the
// Collector's Loki exporter reads, which Loki's read API here honours
// (internal/logql/eval), so a pushed stream reads back as one stream of
// its own labels.
const LabelsHintKey = "loki.resource.labels"

var labelsHintKey = []byte(LabelsHintKey)

// labelsHint appends to dst the resource attributes of d.labels (and
// service.name, if discovered), comma-separated.
func (d *Decoder) labelsHint(dst []byte, discovered bool) []byte {
	for i, l := range d.labels {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, resourceKey(l.k)...)
	}
	if discovered {
		dst = append(dst, ","...)
		dst = append(dst, serviceName...)
	}
	return dst
}

// resourceKey is the resource attribute of label name k.
func resourceKey(k []byte) []byte {
	if string(k) == "service_name" {
		return serviceName
	}
	return k
}

// serviceLabels are the labels Loki 3 takes a stream's service_name from
// when it has none (its discover_service_name default), in that order.
var serviceLabels = []string{"service", "app", "application", "app_name", "name", "app_kubernetes_io_name",
	"container", "container_name", "k8s_container_name", "component", "workload", "job", "k8s_job_name"}

// discoverService is the value a stream without a service_name label
// takes its service from (serviceLabels), nil if it has one or none of
// those.
func (d *Decoder) discoverService() []byte {
	for _, l := range d.labels {
		if string(l.k) == "service_name" {
			return nil
		}
	}
	for _, name := range serviceLabels {
		for _, l := range d.labels {
			if string(l.k) == name && len(l.v) > 0 {
				return l.v
			}
		}
	}
	return nil
}

// checkLabels drops d.labels' __ names and returns why Loki would refuse
// the rest ("" if it would not). d.labels are sorted by name.
func (d *Decoder) checkLabels() string {
	d.labels = slices.DeleteFunc(d.labels, func(l kv) bool { return strings.HasPrefix(string(l.k), "__") })
	switch {
	case len(d.labels) == 0:
		return "missing_labels: a stream has no labels"
	case len(d.labels) > d.Limits.MaxLabelNames:
		return fmt.Sprintf("max_label_names_per_series: stream %s has %d labels, more than the limit of %d", d.labelString(), len(d.labels), d.Limits.MaxLabelNames)
	}
	for i, l := range d.labels {
		switch {
		case !model.LabelName(l.k).IsValidLegacy():
			return fmt.Sprintf("invalid_labels: label name %q is not a valid Loki label name", l.k)
		case len(l.k) > d.Limits.MaxLabelNameBytes:
			return fmt.Sprintf("label_name_too_long: a label name of %d bytes is longer than the limit of %d", len(l.k), d.Limits.MaxLabelNameBytes)
		case len(l.v) > d.Limits.MaxLabelValueBytes:
			return fmt.Sprintf("label_value_too_long: the value of label %s, of %d bytes, is longer than the limit of %d", l.k, len(l.v), d.Limits.MaxLabelValueBytes)
		case i > 0 && string(d.labels[i-1].k) == string(l.k):
			return fmt.Sprintf("duplicate_label_names: label %s twice", l.k)
		}
	}
	return ""
}

// labelString is d.labels as Loki writes a stream, for messages (at most
// the first few hundred bytes).
func (d *Decoder) labelString() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, l := range d.labels {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s=%q", l.k, l.v)
		if b.Len() > 256 {
			b.WriteString(", ...")
			break
		}
	}
	b.WriteByte('}')
	return b.String()
}
