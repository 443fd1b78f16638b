package metricstore

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/model/exemplar"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// seriesKind tags a cache key with the kind of data point it is for.
type seriesKind byte

const (
	kindNumber       seriesKind = 'n'
	kindHistogram    seriesKind = 'h'
	kindExpHistogram seriesKind = 'e'
	kindSummary      seriesKind = 's'
	kindTarget       seriesKind = 't'
)

// Series slots of a histogram point: then one _bucket per explicit bound.
const (
	histCount = iota
	histInf
	histSum
	histBucket0
)

// Series slots of a summary point: then one per quantile.
const (
	sumSum = iota
	sumCount
	sumQuantile0
)

// appendState is the reusable state of one AppendOTLP call: the decoded
// fields, the lazily built label context of the current resource, scope and
// metric, and scratch buffers. Pooled by the Store.
type appendState struct {
	s         *Store
	app       storage.AppenderV2
	res       Result
	req       otlpwire.MetricsRequest
	validated bool   // req passed otlpwire's Validate (see validateAll)
	epoch     uint64 // the series cache epoch (Store.syncCache)
	// tenant is the request's tenant: "" (the default) adds no label,
	// another adds TenantLabel to every series (see tenant.go).
	tenant string
	// seriesLimit is the tenant's Config.SeriesLimit, 0 for none.
	seriesLimit int

	mf otlpwire.MetricFields
	np otlpwire.NumberDataPointFields
	hp otlpwire.HistogramDataPointFields
	ep otlpwire.ExponentialHistogramDataPointFields
	sp otlpwire.SummaryDataPointFields

	bounds    []float64
	counts    []uint64
	quantiles []float64
	shape     []byte
	key, buf  []byte

	minT, maxT uint64
	notAfter   int64 // ms: later samples and exemplars are refused
	seenTarget map[targetKey]struct{}

	// Resource context; the labels are built on the first cache miss.
	resource  otlpwire.Resource
	resID     uint32
	resBuilt  bool
	resReject string
	job, inst string
	promoted  labels.Labels

	// Scope context, likewise.
	scope                             otlpwire.Scope
	schemaURL                         []byte
	scopeID                           uint32
	scopeBuilt, scopeOn               bool
	scopeReject                       string
	scopeName, scopeVer, scopeURLText string
	scopeAttrs                        labels.Labels

	// Metric context.
	metricReject string // applies to every point of the metric
	// delta: the metric's points are deltas, stored cumulative (delta.go);
	// base, the last samples of the current delta histogram point's
	// series; deltaOwn, the cumulative samples computed while the request
	// is recorded for its sorted pass, by labels hash.
	delta      bool
	base       []float64
	deltaOwn   map[uint64]lastSample
	nameBuilt  bool
	name       string
	nameReject string

	// Exemplars of the point being appended (exAll), of one bucket
	// (exBucket), and those the next sample carries (ex).
	exAll, exBucket, ex []exemplar.Exemplar
	exf                 otlpwire.ExemplarFields
	exb                 labels.ScratchBuilder
	exScratch           []byte   // an exemplar's label names and values
	exPairs             [][3]int // offsets in exScratch: name, value, end

	// The point being appended. attrsChecked: its attributes are known
	// valid (entry looked them up); if not, settle checks them. curTarget:
	// cur is the resource's target_info.
	cur                                         *cacheEntry
	fresh, refsChanged, attrsChecked, curTarget bool

	// Metadata of the families whose first series this request created,
	// recorded once it commits.
	newMeta   []familyMeta
	curFailed string
	// curStored: a sample of the current point was appended to be
	// stored; curExact: one was left out as equal to a sample this
	// request appended before (see follows).
	curStored, curExact bool

	// Time order (order.go): the last sample appended to each series in
	// this request; resort, a sample came before it (the request is
	// appended again, sorted); recording and replaying, the two halves of
	// that sorted pass; the points recorded, their samples, exemplars and
	// the metadata of the families they may create.
	last                 refIndex // index in marks
	marks                []seriesMark
	shardOrder           []int32           // the ledger's byShard buffer
	markRef              storage.SeriesRef // the last mark returned, at marks[markIdx]
	markIdx              int32
	ooo                  map[oooKey]lastSample // samples appended before their series' last
	lookups              int                   // samples looked up in the TSDB (beforeLast)
	resort               bool
	recording, replaying bool
	pend                 []pendingPoint
	pendS                []pendingSample
	pendEx               []exemplar.Exemplar
	pendMeta             []familyMeta
	curMeta              int

	// The attempt's TSDB, context and head reader, and the ledger's gen
	// when it began (ledger.go).
	gen0 uint64
	db   *tsdb.DB
	ctx  context.Context
	head headReader

	lb    *labels.Builder
	pairs []labelPair
	names map[string]string // sanitized label names
	namer otlptranslator.LabelNamer
}

type labelPair struct{ name, value string }

func newAppendState() *appendState {
	return &appendState{
		seenTarget: make(map[targetKey]struct{}),
		lb:         labels.NewBuilder(labels.EmptyLabels()),
		names:      make(map[string]string),
		// Prometheus' defaults for the UnderscoreEscapingWithSuffixes
		// translation strategy (config.DefaultOTLPConfig).
		namer: otlptranslator.LabelNamer{
			UnderscoreLabelSanitization: true, //nolint:staticcheck // Prometheus' default
			PreserveMultipleUnderscores: true,
		},
	}
}

// reset drops every reference to the request and the store, keeping
// capacity.
func (a *appendState) reset() {
	ns, lb, names, namer, newMeta, last, ooo, marks := a.seenTarget, a.lb, a.names, a.namer, a.newMeta, a.last, a.ooo, a.marks
	clear(newMeta)
	clear(ns)
	if len(names) > 4096 {
		clear(names)
	}
	shardOrder := a.shardOrder
	if len(last.slots) > 2*maxKeptLast {
		last, marks, shardOrder = refIndex{}, nil, nil // let huge ones go
	}
	last.clear()
	clear(marks)
	if len(ooo) > maxKeptLast {
		ooo = nil
	}
	clear(ooo)
	a.head.close()
	pend, pendS, pendEx, pendMeta := a.pendingBuffers()
	*a = appendState{
		bounds: a.bounds[:0], counts: a.counts[:0], quantiles: a.quantiles[:0],
		shape: a.shape[:0], key: a.key[:0], buf: a.buf[:0], pairs: a.pairs[:0], base: a.base[:0],
		seenTarget: ns, lb: lb, names: names, namer: namer, newMeta: newMeta[:0],
		last: last, marks: marks[:0], shardOrder: shardOrder[:0], ooo: ooo, pend: pend, pendS: pendS, pendEx: pendEx, pendMeta: pendMeta,
	}
	a.lb.Reset(labels.EmptyLabels())
}

// setResource makes r the current resource, validating it the first time
// its bytes are seen.
func (a *appendState) setResource(r otlpwire.Resource) error {
	id, err := a.s.cache.intern(a.s.cache.resources, r, validateResource, r)
	if err != nil {
		return err
	}
	a.resource, a.resID = r, id
	a.resBuilt, a.resReject, a.job, a.inst, a.promoted = false, "", "", "", labels.EmptyLabels()
	return nil
}

// setScope makes sc (with its container's schema URL) the current scope,
// validating it the first time its bytes are seen.
func (a *appendState) setScope(sc otlpwire.Scope, url []byte) error {
	a.buf = binary.AppendUvarint(a.buf[:0], uint64(len(sc)))
	a.buf = append(append(a.buf, sc...), url...)
	id, err := a.s.cache.intern(a.s.cache.scopes, a.buf, validateScope, sc)
	if err != nil {
		return err
	}
	a.scope, a.schemaURL, a.scopeID = sc, url, id
	a.scopeBuilt, a.scopeOn, a.scopeReject = false, false, ""
	return nil
}

func validateResource(b []byte) error { return otlpwire.Resource(b).Validate() }
func validateScope(b []byte) error    { return otlpwire.Scope(b).Validate() }

func (a *appendState) setMetric() {
	a.metricReject, a.nameBuilt, a.name, a.nameReject = "", false, "", ""
}

func appendLenBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// appendTenant ends a cache key with the request's tenant, so that two
// tenants' identical points are two entries, two series: nothing for the
// default tenant (its keys are as they were before tenants), else the
// tenant's name with its length. Either way the key's layout up to there
// (what seriesCache.sweep reads) is the same.
func (a *appendState) appendTenant(k []byte) []byte {
	if a.tenant == "" {
		return k
	}
	return append(binary.AppendUvarint(k, uint64(len(a.tenant))), a.tenant...)
}

// entry returns the cache entry of the current point's series, building and
// caching it on a miss, or nil with the point counted as rejected. The key
// is the exact wire content the labels depend on.
func (a *appendState) entry(kind seriesKind, attrs otlpwire.Attributes, shape []byte) (*cacheEntry, error) {
	k := append(a.key[:0], byte(kind))
	k = binary.LittleEndian.AppendUint32(k, a.resID)
	k = binary.LittleEndian.AppendUint32(k, a.scopeID)
	k = appendLenBytes(k, a.mf.Name)
	k = appendLenBytes(k, a.mf.Unit)
	mono := byte(0)
	if a.mf.IsMonotonic && a.mf.Type == otlpwire.MetricTypeSum {
		mono = 1
	}
	k = append(k, byte(a.mf.Type), mono)
	// The attributes' wire bytes, as they are: equal bytes decode to
	// equal labels. A miss builds (and validates) them.
	k = appendLenBytes(k, attrs.Raw())
	k = a.appendTenant(k)
	a.key = k
	e := a.current(a.s.cache.get(k))
	a.attrsChecked = true // a hit on validated bytes, or build validates them
	if e != nil && e.unborn {
		// Its first sample will create a series: as for a miss.
		if err := a.validateAll(); err != nil {
			return nil, err
		}
	}
	if e == nil || e.shape != string(shape) {
		var err error
		if e, err = a.build(kind, attrs, shape); err != nil {
			return nil, err
		}
		e.key = string(k)
		if e.reject != "" {
			a.s.cache.put(e, a.epoch)
		} else {
			a.fresh = true
		}
	}
	if e.reject != "" {
		a.rejectOf(e.reject, e)
		return nil, nil
	}
	return e, nil
}

// current returns e if it was stored in this request's cache epoch, else
// a copy of e for this epoch: without its references, which the point's
// samples fill again from the labels (see Store.syncCache), with a.fresh
// set so that endTarget stores it; or, for an entry with no series or a
// refused one, stored at once. Nil stays nil.
func (a *appendState) current(e *cacheEntry) *cacheEntry {
	a.fresh = false
	if e == nil || e.epoch == a.epoch {
		return e
	}
	c := *e
	if len(e.series) == 0 || e.reject != "" {
		// Nothing is appended to it, so no references to drop and no
		// point to store it after: store it now as used in this epoch,
		// which keeps it from seriesCache.sweep.
		a.s.cache.put(&c, a.epoch)
		return &c
	}
	c.series = make([]cachedSeries, len(e.series))
	for i, cs := range e.series {
		c.series[i].lset, c.series[i].led = cs.lset, cs.led
		c.unborn = c.unborn || !cs.lset.IsEmpty()
	}
	a.fresh = true
	return &c
}

// targetEntry returns the target_info entry of the current resource, or nil
// when the resource has none.
func (a *appendState) targetEntry() (*cacheEntry, error) {
	k := append(a.key[:0], byte(kindTarget))
	k = binary.LittleEndian.AppendUint32(k, a.resID)
	k = a.appendTenant(k)
	a.key = k
	e := a.current(a.s.cache.get(k))
	if e != nil && e.unborn {
		if err := a.validateAll(); err != nil {
			return nil, err
		}
	}
	if e == nil {
		var err error
		if e, err = a.buildTarget(); err != nil {
			return nil, err
		}
		e.key = string(k)
		if len(e.series) == 0 {
			a.s.cache.put(e, a.epoch)
		} else {
			a.fresh = true
		}
	}
	if len(e.series) == 0 {
		return nil, nil
	}
	return e, nil
}

// build translates one data point identity into its series labels, as
// Prometheus' createAttributes and addLabels do.
//
// It validates the whole request first (see AppendOTLP): the entry's series
// are about to be created, and every entry then stands for attribute bytes
// that were checked, so a cache hit on them needs no check.
func (a *appendState) build(kind seriesKind, attrs otlpwire.Attributes, shape []byte) (*cacheEntry, error) {
	if err := a.validateAll(); err != nil {
		return nil, err
	}
	a.s.builds.Add(1)
	e := &cacheEntry{shape: string(shape)}
	if r, err := a.resourceCtx(); err != nil || r != "" {
		e.reject = r
		return e, err
	}
	if r, err := a.scopeCtx(); err != nil || r != "" {
		e.reject = r
		return e, err
	}
	if e.reject = a.metricName(); e.reject != "" {
		return e, nil
	}
	base, reject, err := a.baseLabels(attrs, isReservedAttr, true, true)
	if err != nil || reject != "" {
		e.reject = reject
		return e, err
	}
	name := a.name
	add := func(suffix, extra, v string) {
		e.series = append(e.series, cachedSeries{lset: a.addLabels(base, name+suffix, extra, v), led: new(ledgerHint)})
	}
	switch kind {
	case kindNumber, kindExpHistogram:
		add("", "", "")
	case kindHistogram:
		add("_count", "", "")
		add("_bucket", "le", "+Inf")
		add("_sum", "", "")
		for i := 0; i+8 <= len(shape); i += 8 {
			b := math.Float64frombits(binary.LittleEndian.Uint64(shape[i:]))
			if math.IsInf(b, 1) {
				e.series = append(e.series, cachedSeries{})
				continue
			}
			add("_bucket", "le", strconv.FormatFloat(b, 'f', -1, 64))
		}
	case kindSummary:
		add("_sum", "", "")
		add("_count", "", "")
		for i := 0; i+8 <= len(shape); i += 8 {
			q := math.Float64frombits(binary.LittleEndian.Uint64(shape[i:]))
			add("", "quantile", strconv.FormatFloat(q, 'f', -1, 64))
		}
	}
	e.reject = a.checkSeries(e.series)
	return e, nil
}

// buildTarget is Prometheus' addResourceTargetInfo label logic.
func (a *appendState) buildTarget() (*cacheEntry, error) {
	if err := a.validateAll(); err != nil {
		return nil, err
	}
	e := &cacheEntry{}
	if r, err := a.resourceCtx(); err != nil || r != "" {
		return e, err
	}
	attrs, err := a.resource.Attributes()
	if err != nil {
		return nil, err
	}
	n, err := attrs.Len()
	if err != nil {
		return nil, err
	}
	for _, k := range identifyingAttrs {
		if _, ok, err := attrs.Get(k); err != nil {
			return nil, err
		} else if ok {
			n--
		}
	}
	if n == 0 {
		return e, nil // only job and instance: target_info says nothing
	}
	base, reject, err := a.baseLabels(attrs, isIdentifyingAttr, false, false)
	if err != nil || reject != "" {
		return e, err
	}
	if a.job == "" && a.inst == "" {
		return e, nil
	}
	series := []cachedSeries{{lset: a.addLabels(base, "target_info", "", ""), led: new(ledgerHint)}}
	if a.checkSeries(series) == "" {
		e.series = series
		e.hash = series[0].lset.Hash()
	}
	return e, nil
}

var identifyingAttrs = []string{"service.namespace", "service.name", "service.instance.id"}

func isReservedAttr(k []byte) bool { return string(k) == "__name__" }

func isIdentifyingAttr(k []byte) bool {
	s := string(k)
	return s == "service.namespace" || s == "service.name" || s == "service.instance.id"
}

func (a *appendState) checkSeries(series []cachedSeries) string {
	hidden := 0 // the tenant label, which the tenant does not see, does not count
	if a.tenant != "" {
		hidden = 1
	}
	for _, cs := range series {
		if a.s.cfg.LabelLimit > 0 && cs.lset.Len()-hidden > a.s.cfg.LabelLimit {
			return ReasonLabelLimit
		}
		bad := false
		cs.lset.Range(func(l labels.Label) {
			bad = bad || !utf8.ValidString(l.Name) || !utf8.ValidString(l.Value)
		})
		if bad {
			return ReasonInvalidUTF8
		}
	}
	return ""
}

func (a *appendState) valueString(v otlpwire.Value) (string, error) {
	b, err := appendValueString(a.buf[:0], v)
	a.buf = b
	return string(b), err
}

func (a *appendState) labelName(s string) (string, error) {
	if n, ok := a.names[s]; ok {
		return n, nil
	}
	n, err := a.namer.Build(s)
	if err != nil {
		return "", err
	}
	a.names[s] = n
	return n, nil
}

func (a *appendState) resourceCtx() (string, error) {
	if a.resBuilt {
		return a.resReject, nil
	}
	attrs, err := a.resource.Attributes()
	if err != nil {
		return "", err
	}
	if v, ok, err := attrs.Get("service.name"); err != nil {
		return "", err
	} else if ok {
		if a.job, err = a.valueString(v); err != nil {
			return "", err
		}
		if ns, ok, err := attrs.Get("service.namespace"); err != nil {
			return "", err
		} else if ok {
			s, err := a.valueString(ns)
			if err != nil {
				return "", err
			}
			a.job = s + "/" + a.job
		}
	}
	if v, ok, err := attrs.Get("service.instance.id"); err != nil {
		return "", err
	} else if ok {
		if a.inst, err = a.valueString(v); err != nil {
			return "", err
		}
	}
	if a.s.promoted != nil {
		a.lb.Reset(labels.EmptyLabels())
		for kv, err := range attrs.All() {
			if err != nil {
				return "", err
			}
			if _, listed := a.s.promoted[string(kv.Key)]; listed == a.s.cfg.PromoteAllResourceAttributes {
				continue // not listed, or listed as ignored under promote-all
			}
			name, err := a.labelName(string(kv.Key))
			if err != nil {
				a.resReject = ReasonInvalidName
				break
			}
			if name == TenantLabel {
				continue // reserved: only the request's tenant sets it
			}
			v, err := a.valueString(kv.Value)
			if err != nil {
				return "", err
			}
			a.lb.Set(name, v)
		}
		a.promoted = a.lb.Labels()
	}
	a.resBuilt = true
	return a.resReject, nil
}

func (a *appendState) scopeCtx() (string, error) {
	if a.scopeBuilt {
		return a.scopeReject, nil
	}
	if a.s.cfg.ScopeLabels {
		var sf otlpwire.ScopeFields
		if err := a.scope.Read(&sf); err != nil {
			return "", err
		}
		if len(sf.Name) > 0 {
			a.scopeOn = true
			a.scopeName, a.scopeVer, a.scopeURLText = string(sf.Name), string(sf.Version), string(a.schemaURL)
			a.lb.Reset(labels.EmptyLabels())
			for kv, err := range sf.Attributes.All() {
				if err != nil {
					return "", err
				}
				name, err := a.labelName("otel_scope_" + string(kv.Key))
				if err != nil {
					a.scopeReject = ReasonInvalidName
					break
				}
				v, err := a.valueString(kv.Value)
				if err != nil {
					return "", err
				}
				a.lb.Set(name, v)
			}
			a.scopeAttrs = a.lb.Labels()
		}
	}
	a.scopeBuilt = true
	return a.scopeReject, nil
}

func (a *appendState) metricName() string {
	if a.nameBuilt {
		return a.nameReject
	}
	a.nameBuilt = true
	mf := &a.mf
	if !utf8.Valid(mf.Name) || !utf8.Valid(mf.Unit) {
		a.nameReject = ReasonInvalidUTF8
		return a.nameReject
	}
	typ, _ := metricTypes(mf)
	name, err := a.s.metricName.Build(otlptranslator.Metric{Name: string(mf.Name), Unit: string(mf.Unit), Type: typ})
	if err != nil || name == "" {
		a.nameReject = ReasonInvalidName
		return a.nameReject
	}
	a.name = name
	return ""
}

// metricTypes gives a metric's type as otlptranslator names it and as
// Prometheus' metadata gives it (otelMetricTypeToPromMetricType; delta
// metrics, which that makes unknown, are refused before).
func metricTypes(mf *otlpwire.MetricFields) (otlptranslator.MetricType, model.MetricType) {
	switch mf.Type {
	case otlpwire.MetricTypeGauge:
		return otlptranslator.MetricTypeGauge, model.MetricTypeGauge
	case otlpwire.MetricTypeSum:
		if mf.IsMonotonic {
			return otlptranslator.MetricTypeMonotonicCounter, model.MetricTypeCounter
		}
		return otlptranslator.MetricTypeNonMonotonicCounter, model.MetricTypeGauge
	case otlpwire.MetricTypeHistogram:
		return otlptranslator.MetricTypeHistogram, model.MetricTypeHistogram
	case otlpwire.MetricTypeExponentialHistogram:
		return otlptranslator.MetricTypeExponentialHistogram, model.MetricTypeHistogram
	case otlpwire.MetricTypeSummary:
		return otlptranslator.MetricTypeSummary, model.MetricTypeSummary
	}
	return otlptranslator.MetricTypeUnknown, model.MetricTypeUnknown
}

// baseLabels is Prometheus' createAttributes without the extras: the
// attributes sorted by key, names sanitized, values of colliding names
// joined with ';', then promoted resource attributes, job, instance and the
// scope labels; then, for a tenant other than the default, TenantLabel. An
// attribute whose name sanitizes to TenantLabel is dropped, whatever the
// tenant, so that no request can write into another tenant's series.
func (a *appendState) baseLabels(attrs otlpwire.Attributes, ignore func([]byte) bool, withPromoted, withScope bool) (labels.Labels, string, error) {
	a.pairs = a.pairs[:0]
	for kv, err := range attrs.All() {
		if err != nil {
			return labels.EmptyLabels(), "", err
		}
		if ignore(kv.Key) {
			continue
		}
		v, err := a.valueString(kv.Value)
		if err != nil {
			return labels.EmptyLabels(), "", err
		}
		a.pairs = append(a.pairs, labelPair{string(kv.Key), v})
	}
	slices.SortStableFunc(a.pairs, func(x, y labelPair) int { return strings.Compare(x.name, y.name) })
	lb := a.lb
	lb.Reset(labels.EmptyLabels())
	for _, p := range a.pairs {
		name, err := a.labelName(p.name)
		if err != nil {
			return labels.EmptyLabels(), ReasonInvalidName, nil
		}
		if name == TenantLabel {
			continue // reserved: only the request's tenant sets it
		}
		if old := lb.Get(name); old != "" {
			lb.Set(name, old+";"+p.value)
		} else {
			lb.Set(name, p.value)
		}
	}
	if withPromoted {
		a.promoted.Range(func(l labels.Label) {
			if lb.Get(l.Name) == "" {
				lb.Set(l.Name, l.Value)
			}
		})
	}
	if a.job != "" {
		lb.Set("job", a.job)
	}
	if a.inst != "" {
		lb.Set("instance", a.inst)
	}
	if withScope && a.scopeOn {
		a.scopeAttrs.Range(func(l labels.Label) { lb.Set(l.Name, l.Value) })
		lb.Set("otel_scope_name", a.scopeName)
		lb.Set("otel_scope_version", a.scopeVer)
		lb.Set("otel_scope_schema_url", a.scopeURLText)
	}
	if a.tenant != "" {
		lb.Set(TenantLabel, a.tenant)
	}
	return lb.Labels(), "", nil
}

// addLabels is Prometheus' addLabels: base plus an optional extra label and
// __name__.
func (a *appendState) addLabels(base labels.Labels, name, extra, v string) labels.Labels {
	a.lb.Reset(base)
	if extra != "" {
		a.lb.Set(extra, v)
	}
	a.lb.Set(labels.MetricName, name)
	return a.lb.Labels()
}
