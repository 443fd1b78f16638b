// Package promwrite receives Prometheus remote write 1.0 on the wire: the
// snappy-decoded WriteRequest is read with protowire in one pass, each
// series' label set is decoded once and kept (keyed by its bytes as sent,
// per tenant, with the series reference it was last stored in when the
// appender is Generational), and every sample goes to a
// storage.AppenderV2, with no generated structs, no per-request label
// strings and no garbage per sample.
//
// It is a fast path in front of Prometheus' own handler, not a
// replacement: the requests it takes are the common ones (remote write
// 1.0, snappy, float samples), and it answers them exactly as Prometheus'
// handler would (204 once committed). Everything else goes to that
// handler (Config.Fallback) with the body as sent: remote write 2.0,
// histograms, exemplars, metadata, a label set Prometheus would refuse, a sample
// the storage refuses or one too far in the future (the appended samples
// are rolled back first), a malformed message, any unusual header. So
// each answer, status code, log line and counter of an unusual request
// is Prometheus' own. One exception: a sample refused for its series
// only (an error with SeriesOnly, metricstore's per-tenant series limit)
// leaves that series out; the others are stored and the answer is 400
// (not retried) naming the samples refused, as Mimir answers series over
// its limit, where Prometheus' handler would refuse the whole request.
package promwrite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Limits and rules of Prometheus' handler (client_golang's exp/api/remote
// and prometheus/storage/remote), which the fast path keeps.
const (
	maxDecodedSize = 32 << 20         // body and decoded body bound
	maxAheadTime   = 10 * time.Minute // samples later than now+this are refused
)

// DefaultMaxLabelSets is DefaultConfig's MaxLabelSets.
const DefaultMaxLabelSets = 1 << 20

// Config configures a Handler. Start from DefaultConfig.
type Config struct {
	// Appendable receives the samples, with the request's context (which
	// carries its tenant). Required.
	Appendable storage.AppendableV2
	// Fallback is Prometheus' own remote write handler over the same
	// storage, for every request the fast path does not take. Required.
	Fallback http.Handler
	// MaxLabelSets bounds the decoded label sets kept; past it they are
	// all dropped and decoded again as they come (default
	// DefaultMaxLabelSets).
	MaxLabelSets int
	// Now is the clock for the future-sample limit (default time.Now).
	Now func() time.Time
}

// DefaultConfig returns the defaults: DefaultMaxLabelSets, time.Now.
func DefaultConfig() Config { return Config{MaxLabelSets: DefaultMaxLabelSets, Now: time.Now} }

// Validate reports what New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Appendable == nil:
		return errors.New("promwrite: Appendable is required")
	case c.Fallback == nil:
		return errors.New("promwrite: Fallback is required")
	case c.MaxLabelSets <= 0:
		return fmt.Errorf("promwrite: MaxLabelSets %d, must be positive", c.MaxLabelSets)
	case c.Now == nil:
		return errors.New("promwrite: Now is required")
	}
	return nil
}

// Handler is the remote write endpoint. It is safe for concurrent use.
type Handler struct {
	cfg Config

	mu   sync.RWMutex
	sets map[string]map[string]*labelSet // tenant -> label fields as sent -> their set
	n    int                             // label sets in sets

	bufs sync.Pool // *buffers
}

type buffers struct {
	body, decoded []byte
	series        []seriesAt
	points        []point
	sb            labels.ScratchBuilder
}

// seriesAt is a series of the request and its samples, points[lo:hi]:
// its label set, and the series reference to start from.
type seriesAt struct {
	set    *labelSet
	ref    storage.SeriesRef
	lo, hi int
}

// labelSet is a label set decoded once, and the series it was last
// stored in. What a request reads of it sits in the struct itself, not
// behind pointers: with many series each is a cache miss.
type labelSet struct {
	ls labels.Labels
	// as is ls as the appenders of its tenant store it, when the
	// appender that first decoded it was a Relabeler (relabeled).
	as        labels.Labels
	relabeled bool
	// stored is the series reference of the last commit and its
	// Generation, packed by packRef (0: none).
	stored atomic.Uint64
}

// storedAs returns the labels rel stores s under.
func (s *labelSet) storedAs(rel Relabeler) labels.Labels {
	if s.relabeled {
		return s.as
	}
	return rel.Relabel(s.ls)
}

// packRef packs a series reference and its Generation into one word (the
// generation in the top 16 bits), or returns 0 when either does not fit:
// such a reference is not kept, and the series is looked up by its labels.
func packRef(ref storage.SeriesRef, gen uint64) uint64 {
	if ref == 0 || uint64(ref)>>48 != 0 || gen == 0 || gen>>16 != 0 {
		return 0
	}
	return gen<<48 | uint64(ref)
}

// refOf returns the reference packed in p if it belongs to gen, else 0.
func refOf(p, gen uint64) storage.SeriesRef {
	if p == 0 || p>>48 != gen {
		return 0
	}
	return storage.SeriesRef(p & (1<<48 - 1))
}

// Generational is an appender that says which lifetime of its storage
// its series references belong to (metricstore's tenant appender): a
// committed reference is given again, to skip the series lookup, only to
// an appender of the same generation and tenant. Without it, or with
// Generation 0, no reference is kept.
type Generational interface {
	Generation() uint64
}

// Relabeler is an appender that stores a series under other labels than
// it is given (metricstore's tenant appender: the tenant's label).
// Relabel says which, depending on the tenant only, and AppendRelabeled
// takes labels Relabel returned as they are, so that a label set kept
// across requests is relabelled once, not at every sample.
type Relabeler interface {
	Relabel(labels.Labels) labels.Labels
	AppendRelabeled(ref storage.SeriesRef, ls labels.Labels, st, t int64, v float64, h *histogram.Histogram, fh *histogram.FloatHistogram, opts storage.AOptions) (storage.SeriesRef, error)
}

type point struct {
	t int64
	v float64
}

// New returns a Handler.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, sets: map[string]map[string]*labelSet{}}, nil
}

// plainV1 reports whether the headers are those of a remote write 1.0
// request as Prometheus sends it: POST, snappy, protobuf of the 1.0
// message (a Content-Type without proto= is 1.0).
func plainV1(r *http.Request) bool {
	if r.Method != http.MethodPost || r.Header.Get("Content-Encoding") != "snappy" {
		return false
	}
	switch strings.TrimSpace(r.Header.Get("Content-Type")) {
	case "", "application/x-protobuf", "application/x-protobuf;proto=prometheus.WriteRequest":
		return true
	}
	return false
}

// ServeHTTP takes a plain remote write 1.0 request on the fast path and
// passes every other request to the fallback.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !plainV1(r) {
		h.cfg.Fallback.ServeHTTP(w, r)
		return
	}
	b, _ := h.bufs.Get().(*buffers)
	if b == nil {
		b = &buffers{sb: labels.NewScratchBuilder(32)}
	}
	defer h.put(b)
	body, err := readAll(b.body[:0], io.LimitReader(r.Body, maxDecodedSize+1))
	b.body = body[:0]
	if err != nil {
		// As Prometheus' handler answers a body it cannot read.
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ok, refused, err := h.write(r, b, body)
	if err != nil {
		// A failed commit, answered as Prometheus' handler answers it
		// (the sender retries); not passed on, which would append again.
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if ok && refused != nil {
		// The other series stored: 400, not retried, as Mimir answers
		// a request with series over its limit.
		http.Error(w, refused.Error(), http.StatusBadRequest)
		return
	}
	if ok {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	h.cfg.Fallback.ServeHTTP(w, r2)
}

// readAll appends r's bytes to dst.
func readAll(dst []byte, r io.Reader) ([]byte, error) {
	for {
		if len(dst) == cap(dst) {
			dst = append(dst, 0)[:len(dst)]
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
	}
}

// maxPooled bounds the buffers kept between requests.
const maxPooled = 8 << 20

func (h *Handler) put(b *buffers) {
	if cap(b.body) > maxPooled || cap(b.decoded) > maxPooled {
		return
	}
	h.bufs.Put(b)
}

// write stores the request and reports true once committed, or reports
// false for the fallback to answer, having appended nothing or rolled
// back what it appended. err is a failed commit. refused, when not nil,
// says which samples the appender refused with a SeriesOnly error, the
// request's other samples being stored.
//
// The whole request is read and checked before the first sample is
// appended: Prometheus' handler unmarshals it all first, and a sample
// appended then rolled back still leaves its mark on an empty TSDB head
// (the head's time range is set by the first sample it is given).
func (h *Handler) write(r *http.Request, b *buffers, body []byte) (ok bool, refused, err error) {
	if len(body) > maxDecodedSize {
		return false, nil, nil
	}
	n, err := snappy.DecodedLen(body)
	if err != nil || n > maxDecodedSize {
		return false, nil, nil
	}
	if cap(b.decoded) < n {
		b.decoded = make([]byte, n)
	}
	req, err := snappy.Decode(b.decoded[:n], body)
	if err != nil {
		return false, nil, nil
	}
	app := h.cfg.Appendable.AppenderV2(r.Context())
	var gen uint64
	if g, ok := app.(Generational); ok {
		gen = g.Generation()
	}
	rel, _ := app.(Relabeler)
	if !h.read(b, req, tenant.FromContext(r.Context()), gen, rel) {
		_ = app.Rollback()
		return false, nil, nil
	}
	var refusedSamples, refusedSeries int
	for i := range b.series {
		s := &b.series[i]
		ref, seriesRefused := s.ref, false
		for _, p := range b.points[s.lo:s.hi] {
			if rel != nil {
				ref, err = rel.AppendRelabeled(ref, s.set.storedAs(rel), 0, p.t, p.v, nil, nil, storage.AOptions{})
			} else {
				ref, err = app.Append(ref, s.set.ls, 0, p.t, p.v, nil, nil, storage.AOptions{})
			}
			var so seriesOnly
			if err != nil && errors.As(err, &so) && so.SeriesOnly() {
				if refused == nil {
					refused = err
				}
				refusedSamples++
				if !seriesRefused {
					seriesRefused = true
					refusedSeries++
				}
				continue
			}
			if err != nil {
				_ = app.Rollback()
				return false, nil, nil
			}
		}
		s.ref = ref
	}
	if err := app.Commit(); err != nil {
		return false, nil, err
	}
	if refused != nil {
		refused = fmt.Errorf("%d samples of %d series refused, the request's others stored: %w", refusedSamples, refusedSeries, refused)
	}
	if gen != 0 {
		for _, s := range b.series {
			if p := packRef(s.ref, gen); p != 0 && s.set.stored.Load() != p {
				s.set.stored.Store(p)
			}
		}
	}
	return true, refused, nil
}

// seriesOnly is an append error that refuses its series, not the request
// (metricstore.SeriesLimitError): the other series are stored.
type seriesOnly interface {
	SeriesOnly() bool
}

// read decodes the WriteRequest req into b.series and b.points, or
// reports false at the first thing the fast path leaves to Prometheus'
// handler.
func (h *Handler) read(b *buffers, req []byte, tenant string, gen uint64, rel Relabeler) bool {
	b.series, b.points = b.series[:0], b.points[:0]
	notAfter := h.cfg.Now().Add(maxAheadTime).UnixMilli()
	for len(req) > 0 {
		num, typ, n := protowire.ConsumeTag(req)
		if n < 0 {
			return false
		}
		req = req[n:]
		if num == 1 { // timeseries
			if typ != protowire.BytesType {
				return false
			}
			ts, n := protowire.ConsumeBytes(req)
			if n < 0 || !h.readSeries(b, ts, notAfter, tenant, gen, rel) {
				return false
			}
			req = req[n:]
			continue
		}
		if num == 3 {
			// Metadata: Prometheus' 1.0 handler stores none, but its
			// unmarshalling checks every field of it; such requests
			// (Prometheus sends metadata alone, once a minute) are its.
			return false
		}
		// Unknown fields, which its unmarshalling skips.
		if n = skip(req, typ); n < 0 {
			return false
		}
		req = req[n:]
	}
	return true
}

// skip returns the length of a field value of type typ at the head of b,
// or -1 if it is malformed or a group (which the fast path leaves alone).
func skip(b []byte, typ protowire.Type) int {
	if typ == protowire.StartGroupType || typ == protowire.EndGroupType {
		return -1
	}
	return protowire.ConsumeFieldValue(0, typ, b)
}

// readSeries decodes one TimeSeries into b.
func (h *Handler) readSeries(b *buffers, ts []byte, notAfter int64, tenant string, gen uint64, rel Relabeler) bool {
	lstart, lend := -1, -1
	lo := len(b.points)
	for i := 0; i < len(ts); {
		if j := labelRun(ts, i); j > i {
			if lstart < 0 {
				lstart = i
			} else if lend != i {
				return false // labels not in one run: leave it to Prometheus
			}
			lend, i = j, j
			continue
		}
		num, typ, n := protowire.ConsumeTag(ts[i:])
		if n < 0 {
			return false
		}
		at := i
		i += n
		switch num {
		case 1, 2: // labels, samples
			if typ != protowire.BytesType {
				return false
			}
			v, m := protowire.ConsumeBytes(ts[i:])
			if m < 0 {
				return false
			}
			i += m
			if num == 2 {
				t, x, ok := sample(v)
				if !ok || t > notAfter {
					return false
				}
				b.points = append(b.points, point{t, x})
				continue
			}
			if lstart < 0 {
				lstart = at
			} else if lend != at {
				return false // labels not in one run: leave it to Prometheus
			}
			lend = i
		case 3, 4: // exemplars, histograms: Prometheus' handler
			return false
		default:
			m := skip(ts[i:], typ)
			if m < 0 {
				return false
			}
			i += m
		}
	}
	var raw []byte
	if lstart >= 0 {
		raw = ts[lstart:lend]
	}
	set := h.labels(b, raw, tenant, rel)
	if set == nil {
		return false
	}
	b.series = append(b.series, seriesAt{set: set, ref: refOf(set.stored.Load(), gen), lo: lo, hi: len(b.points)})
	return true
}

// labelRun returns the end of the run of label fields at ts[i:] whose
// tag and length are a byte each (field 1 of wire type bytes is tag 0x0a;
// a length under 128 is one byte), or i if there is none: the common shape
// of a series' labels, walked here without protowire's calls, which cost
// a remote write request more than anything but snappy and the map of
// label sets. Anything else (a long label, another field) ends the run
// and is read by the general loop; the fields' contents are checked when
// the label set is first decoded.
func labelRun(ts []byte, i int) int {
	for i+1 < len(ts) && ts[i] == 0x0a && ts[i+1] < 0x80 {
		j := i + 2 + int(ts[i+1])
		if j > len(ts) {
			break
		}
		i = j
	}
	return i
}

// sample decodes a Sample: double value = 1, int64 timestamp = 2.
func sample(s []byte) (t int64, v float64, ok bool) {
	for len(s) > 0 {
		num, typ, n := protowire.ConsumeTag(s)
		if n < 0 {
			return 0, 0, false
		}
		s = s[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			x, m := protowire.ConsumeFixed64(s)
			if m < 0 {
				return 0, 0, false
			}
			v, s = math.Float64frombits(x), s[m:]
		case num == 2 && typ == protowire.VarintType:
			x, m := protowire.ConsumeVarint(s)
			if m < 0 {
				return 0, 0, false
			}
			t, s = int64(x), s[m:]
		case num == 1 || num == 2:
			return 0, 0, false // a known field of another wire type
		default:
			m := skip(s, typ)
			if m < 0 {
				return 0, 0, false
			}
			s = s[m:]
		}
	}
	return t, v, true
}

// labels returns the label set of the label fields raw, for tenant:
// decoded, sorted and checked as Prometheus' handler does, relabelled by
// rel if not nil, kept for the next time the same bytes come. It returns
// nil for a set Prometheus would refuse.
func (h *Handler) labels(b *buffers, raw []byte, tenant string, rel Relabeler) *labelSet {
	h.mu.RLock()
	set := h.sets[tenant][string(raw)]
	h.mu.RUnlock()
	if set != nil {
		return set
	}
	sb := &b.sb
	sb.Reset()
	for rest := raw; len(rest) > 0; {
		_, _, n := protowire.ConsumeTag(rest) // field 1, bytes: checked by readSeries
		rest = rest[n:]
		l, m := protowire.ConsumeBytes(rest)
		rest = rest[m:]
		name, value, ok := label(l)
		if !ok {
			return nil
		}
		sb.Add(name, value)
	}
	sb.Sort()
	ls := sb.Labels()
	if !ls.Has(model.MetricNameLabel) || !ls.IsValid(model.UTF8Validation) {
		return nil
	}
	if _, dup := ls.HasDuplicateLabelNames(); dup {
		return nil
	}
	set = &labelSet{ls: ls}
	if rel != nil {
		set.as, set.relabeled = rel.Relabel(ls), true
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n >= h.cfg.MaxLabelSets {
		clear(h.sets)
		h.n = 0
	}
	m := h.sets[tenant]
	if m == nil {
		m = map[string]*labelSet{}
		h.sets[tenant] = m
	}
	if old := m[string(raw)]; old != nil {
		return old // another request was first
	}
	m[string(raw)] = set
	h.n++
	return set
}

// label decodes a Label: string name = 1, string value = 2.
func label(l []byte) (name, value string, ok bool) {
	for len(l) > 0 {
		num, typ, n := protowire.ConsumeTag(l)
		if n < 0 {
			return "", "", false
		}
		l = l[n:]
		if num == 1 || num == 2 {
			if typ != protowire.BytesType {
				return "", "", false
			}
			v, m := protowire.ConsumeBytes(l)
			if m < 0 {
				return "", "", false
			}
			if num == 1 {
				name = string(v)
			} else {
				value = string(v)
			}
			l = l[m:]
			continue
		}
		m := skip(l, typ)
		if m < 0 {
			return "", "", false
		}
		l = l[m:]
	}
	return name, value, true
}
