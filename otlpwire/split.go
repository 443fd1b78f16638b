package otlpwire

import (
	"errors"
	"fmt"
	"iter"

	"google.golang.org/protobuf/encoding/protowire"
)

// Splitter cuts export requests into chunks of at most a number of records
// and at most a number of bytes, so that a maximum batch size can be
// enforced downstream. Each chunk is a complete export request of the same
// signal: every record keeps its resource and scope (and, for metrics, its
// metric and data container) by copying their headers, the fields other
// than the repeated child field, byte for byte. Records keep their order.
// Resource, scope and metric containers that hold no records are dropped.
//
// A Splitter reuses one buffer; once it has grown to the largest chunk it
// does not allocate. It is not safe for concurrent use.
type Splitter struct {
	maxRecords int
	maxBytes   int
	buf        []byte
	levels     [5]splitLevel
	n          int // levels in use: 3 for logs and traces, 5 for metrics
	names      []string
	records    int // records in the chunk being built
}

// splitLevel is one container between the request and the records.
type splitLevel struct {
	num   protowire.Number // field number of the container in its parent
	msg   []byte           // the container's body
	skip  func(protowire.Number) bool
	start int // offset of the container's content in buf, when open
	open  bool
}

// SplitOption configures a Splitter.
type SplitOption func(*Splitter) error

// ErrSplitOption is wrapped by NewSplitter errors for invalid options.
var ErrSplitOption = errors.New("invalid split option")

// WithMaxRecords caps the log records, spans or data points in one chunk.
// n must be positive. The default, 0, sets no cap.
func WithMaxRecords(n int) SplitOption {
	return func(s *Splitter) error {
		if n <= 0 {
			return fmt.Errorf("max records %d: %w: must be positive", n, ErrSplitOption)
		}
		s.maxRecords = n
		return nil
	}
}

// WithMaxBytes caps the encoded size of one chunk. n must be positive. A
// single record that does not fit under the cap together with its headers
// is still emitted, alone in its chunk: callers that must refuse it check
// len(chunk). The default, 0, sets no cap.
func WithMaxBytes(n int) SplitOption {
	return func(s *Splitter) error {
		if n <= 0 {
			return fmt.Errorf("max bytes %d: %w: must be positive", n, ErrSplitOption)
		}
		s.maxBytes = n
		return nil
	}
}

// NewSplitter returns a Splitter with the given limits.
func NewSplitter(opts ...SplitOption) (*Splitter, error) {
	s := &Splitter{}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, fmt.Errorf("new splitter: %w", err)
		}
	}
	return s, nil
}

// SplitLogs iterates the chunks of req. Each chunk aliases the Splitter's
// buffer and is valid only until the iteration continues: copy it to keep
// it. A malformed request ends the iteration with a non-nil error as the
// last pair; chunks yielded before it are well-formed. Callers that need
// all or nothing call Validate first.
func (s *Splitter) SplitLogs(req LogsRequest) iter.Seq2[LogsRequest, error] {
	return func(yield func(LogsRequest, error) bool) {
		s.init(logLevels)
		s.split(req, func(b []byte, err error) bool { return yield(b, err) })
	}
}

// SplitTraces is SplitLogs for traces.
func (s *Splitter) SplitTraces(req TracesRequest) iter.Seq2[TracesRequest, error] {
	return func(yield func(TracesRequest, error) bool) {
		s.init(spanLevels)
		s.split(req, func(b []byte, err error) bool { return yield(b, err) })
	}
}

// SplitMetrics is SplitLogs for metrics; the records are data points, and a
// metric whose points span chunks appears in each with its name,
// description, unit, metadata and data container fields.
func (s *Splitter) SplitMetrics(req MetricsRequest) iter.Seq2[MetricsRequest, error] {
	return func(yield func(MetricsRequest, error) bool) {
		s.init(metricSplitLevels)
		s.split(req, func(b []byte, err error) bool { return yield(b, err) })
	}
}

var metricSplitLevels = []string{"resource_metrics", "scope_metrics", "metrics", "", "data_points"}

func (s *Splitter) init(names []string) {
	s.n, s.names = len(names), names
	s.buf = s.buf[:0]
	s.records = 0
	for i := range s.levels {
		s.levels[i] = splitLevel{}
	}
}

var errStop = errors.New("stop")

func (s *Splitter) split(req []byte, yield func([]byte, error) bool) {
	err := s.walk(req, 0, yield)
	if err == errStop {
		return
	}
	if err == nil && s.records > 0 {
		s.finish()
		if !yield(s.buf, nil) {
			return
		}
	}
	if err != nil {
		yield(nil, err)
	}
}

func isChildField(n protowire.Number) bool  { return n == fieldChildren }
func isPointsField(n protowire.Number) bool { return n == 1 }
func isDataField(n protowire.Number) bool {
	return n == 5 || n == 7 || n == 9 || n == 10 || n == 11
}

// walk visits the children of parent at level k (0 = resource containers).
func (s *Splitter) walk(parent []byte, k int, yield func([]byte, error) bool) error {
	want := protowire.Number(fieldChildren)
	if k == 0 {
		want = fieldResources
	}
	if s.n == 5 && k == 3 {
		// parent is a Metric: only its last data field counts.
		num, start, end, err := lastDataField(parent)
		if err != nil || num == 0 {
			return err
		}
		return within(s.enter(parent[start:end:end], num, k, yield), metricDataNames[metricDataFields[num]], -1, start)
	}
	if s.n == 5 && k == 4 {
		want = 1
	}
	idx := 0
	for i := 0; i < len(parent); {
		n, typ, j, err := tag(parent, i)
		if err != nil {
			return err
		}
		if n != want {
			if i, err = skip(parent, j, typ); err != nil {
				return err
			}
			continue
		}
		if typ != wireBytes {
			return within(newErr(ErrWireType, 0, ""), s.names[k], idx, i)
		}
		body, end, err := bytesField(parent, j)
		if err != nil {
			return within(err, s.names[k], idx, 0)
		}
		if k == s.n-1 {
			err = s.addRecord(parent[i:end], yield)
		} else {
			err = within(s.enter(body, n, k, yield), s.names[k], idx, end-len(body))
		}
		if err != nil {
			return err
		}
		idx++
		i = end
	}
	return nil
}

// enter descends into the container body, the value of field num at level k.
func (s *Splitter) enter(body []byte, num protowire.Number, k int, yield func([]byte, error) bool) error {
	l := &s.levels[k]
	*l = splitLevel{num: num, msg: body, skip: isChildField}
	switch {
	case s.n == 5 && k == 2:
		l.skip = isDataField
	case s.n == 5 && k == 3:
		l.skip = isPointsField
	}
	// Check the container's framing before any of it is copied as a header.
	for i := 0; i < len(body); {
		_, typ, j, err := tag(body, i)
		if err != nil {
			return err
		}
		if i, err = skip(body, j, typ); err != nil {
			return err
		}
	}
	if err := s.walk(body, k+1, yield); err != nil {
		return err
	}
	if l.open {
		s.close(k)
	}
	return nil
}

// lastDataField finds the last data oneof field of a Metric and returns its
// number and the bounds of its value.
func lastDataField(m []byte) (num protowire.Number, start, end int, err error) {
	for i := 0; i < len(m); {
		n, typ, j, err := tag(m, i)
		if err != nil {
			return 0, 0, 0, err
		}
		if isDataField(n) {
			if typ != wireBytes {
				return 0, 0, 0, newErr(ErrWireType, i, "")
			}
			v, k, err := bytesField(m, j)
			if err != nil {
				return 0, 0, 0, err
			}
			num, start, end, i = n, k-len(v), k, k
			continue
		}
		if i, err = skip(m, j, typ); err != nil {
			return 0, 0, 0, err
		}
	}
	return num, start, end, nil
}

// addRecord appends one record field (tag, length and body) to the chunk,
// emitting the chunk first when the record would not fit.
func (s *Splitter) addRecord(field []byte, yield func([]byte, error) bool) error {
	if s.maxRecords > 0 && s.records == s.maxRecords {
		if err := s.emit(yield); err != nil {
			return err
		}
	}
	mark := len(s.buf)
	var opened [5]bool
	if err := s.openAll(&opened); err != nil {
		return err
	}
	s.buf = append(s.buf, field...)
	if s.maxBytes > 0 && s.records > 0 && s.size() > s.maxBytes {
		// Undo, emit what we had, and start a new chunk with this record.
		s.buf = s.buf[:mark]
		for k := range opened {
			if opened[k] {
				s.levels[k].open = false
			}
		}
		if err := s.emit(yield); err != nil {
			return err
		}
		if err := s.openAll(&opened); err != nil {
			return err
		}
		s.buf = append(s.buf, field...)
	}
	s.records++
	return nil
}

// openAll writes the tag, a one-byte length placeholder and the header
// fields of every container level not yet open in this chunk.
func (s *Splitter) openAll(opened *[5]bool) error {
	for k := 0; k < s.n-1; k++ {
		l := &s.levels[k]
		if l.open {
			continue
		}
		s.buf = protowire.AppendTag(s.buf, l.num, wireBytes)
		s.buf = append(s.buf, 0)
		l.start, l.open = len(s.buf), true
		opened[k] = true
		for i := 0; i < len(l.msg); {
			n, typ, j, err := tag(l.msg, i)
			if err != nil {
				return err
			}
			if j, err = skip(l.msg, j, typ); err != nil {
				return err
			}
			if !l.skip(n) {
				s.buf = append(s.buf, l.msg[i:j]...)
			}
			i = j
		}
	}
	return nil
}

// size is the length the chunk will have once every open level's length
// placeholder is replaced by its varint.
func (s *Splitter) size() int {
	n := len(s.buf)
	for k := 0; k < s.n-1; k++ {
		if l := &s.levels[k]; l.open {
			n += protowire.SizeVarint(uint64(len(s.buf)-l.start)) - 1
		}
	}
	return n
}

// close writes the length of open level k, widening its one-byte
// placeholder when the content needs a longer varint.
func (s *Splitter) close(k int) {
	l := &s.levels[k]
	l.open = false
	n := len(s.buf) - l.start
	w := protowire.SizeVarint(uint64(n))
	if w > 1 {
		s.buf = append(s.buf, make([]byte, w-1)...)
		copy(s.buf[l.start+w-1:], s.buf[l.start:l.start+n])
	}
	protowire.AppendVarint(s.buf[l.start-1:l.start-1], uint64(n))
}

// finish closes every open level, deepest first.
func (s *Splitter) finish() {
	for k := s.n - 2; k >= 0; k-- {
		if s.levels[k].open {
			s.close(k)
		}
	}
}

func (s *Splitter) emit(yield func([]byte, error) bool) error {
	if s.records == 0 {
		return nil
	}
	s.finish()
	if !yield(s.buf, nil) {
		return errStop
	}
	s.buf = s.buf[:0]
	s.records = 0
	return nil
}
