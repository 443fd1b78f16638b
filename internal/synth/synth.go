package synth

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// Config shapes a generated request. Negative counts count as zero.
type Config struct {
	// Seed selects the content; the same Config yields the same bytes.
	// Timestamps advance one second per seed (wrapping after a year of
	// seeds), so consecutive seeds look like consecutive exports.
	Seed int64
	// Order is the field order of every message.
	Order Order
	// Resources is the number of resource containers (ResourceLogs,
	// ResourceSpans, ResourceMetrics) per request.
	Resources int
	// ScopesPerResource is the number of scope containers per resource.
	ScopesPerResource int
	// RecordsPerScope is the number of log records, spans or metric data
	// points per scope. Data points are spread over several metrics.
	RecordsPerScope int
	// Start, if not zero, is the time of seed 0 in place of
	// 2026-01-01T00:00:00Z: seed n is Start plus n seconds. A load
	// generator sets it near now, so a server storing by time takes the
	// data as current.
	Start time.Time
	// Repeat makes every seed carry the records of seed 0, at its own
	// time: the same series with later timestamps, as an exporter's next
	// export does. Seed then only moves the clock: counters and histograms
	// grow with it, and metric gauge values drift along a per-series sine
	// of period 60 seeds.
	Repeat bool
	// Noise, with Repeat, makes the values move as real ones do rather
	// than along perfect lines: each scrape's time jitters by up to 20 ms,
	// a counter's or histogram's count grows by between 0.1 and 1.9 times
	// its rate from one second to the next (never down), and gauges jump
	// by up to ±5 % of their range around their drift. Without it counters
	// are exactly linear in time and gauges a smooth sine, the best case
	// for delta encodings and compressors.
	Noise bool
	// Copy, if positive, makes the metrics a distinct copy of the same
	// records, as another exporter of the same targets would send: every
	// resource's service.instance.id (the series' instance label) ends in
	// "/<Copy>". With Repeat, copies are disjoint sets of series.
	Copy int
	// TotalRecords, if positive, overrides RecordsPerScope: the request
	// holds exactly TotalRecords records, spread as evenly as possible over
	// the Resources×ScopesPerResource scopes (earlier scopes get one more).
	// With no scopes, it has no effect.
	TotalRecords int
}

// records returns the number of records of scope si of resource ri.
func (c Config) records(ri, si int) int {
	if c.TotalRecords <= 0 {
		return max(c.RecordsPerScope, 0)
	}
	scopes := max(c.Resources, 0) * max(c.ScopesPerResource, 0)
	if scopes == 0 {
		return 0
	}
	n := c.TotalRecords / scopes
	if ri*c.ScopesPerResource+si < c.TotalRecords%scopes {
		n++
	}
	return n
}

// Generate returns the request of signal s for cfg: Logs, Traces or Metrics.
// It panics if s is not a valid otlpwire.Signal.
func Generate(s otlpwire.Signal, cfg Config) []byte {
	switch s {
	case otlpwire.SignalLogs:
		return Logs(cfg)
	case otlpwire.SignalTraces:
		return Traces(cfg)
	case otlpwire.SignalMetrics:
		return Metrics(cfg)
	}
	panic(fmt.Sprintf("synth: invalid signal %d", int(s)))
}

// RealisticFixture returns a heavier benchmark fixture of signal s in order
// o than Fixture: 5 resources with 8-10 attributes each, one scope per
// resource with a name and a version, and 100 log records, spans or data
// points per scope, each with timestamps and 4-8 attributes of mixed kinds.
// Every id and body is present, so pdata re-encodes the Descending fixture
// byte for byte. It panics if s is not a valid otlpwire.Signal. The result is a new
// slice and is the same on every call.
func RealisticFixture(s otlpwire.Signal, o Order) []byte {
	cfg := Config{Seed: 0, Order: o, Resources: 5, ScopesPerResource: 1, RecordsPerScope: 100}
	switch s {
	case otlpwire.SignalLogs:
		return newLogsGen(cfg, fixtureProfile).generate(cfg)
	case otlpwire.SignalTraces:
		return newTracesGen(cfg, fixtureProfile).generate(cfg)
	case otlpwire.SignalMetrics:
		return newMetricsGen(cfg, fixtureProfile).generate(cfg)
	}
	panic(fmt.Sprintf("synth: invalid signal %d", int(s)))
}

// profile tunes the realistic generators.
type profile struct {
	resourceAttrs [2]int // min and max resource attributes
	recordAttrs   [2]int // min and max attributes per record; 0, 0 for the signal's default
	fixture       bool   // every optional id present, fewer rare features
}

var (
	defaultProfile = profile{resourceAttrs: [2]int{12, len(resourceKeys)}}
	fixtureProfile = profile{resourceAttrs: [2]int{8, 10}, recordAttrs: [2]int{4, 8}, fixture: true}
)

// Streams of the PCG source, so that the signals of one seed differ.
const (
	streamLogs    = 0x6c6f6773_00000001
	streamTraces  = 0x74726163_00000002
	streamMetrics = 0x6d657472_00000003
)

// gen is the state shared by the realistic generators.
type gen struct {
	r    *rand.Rand
	e    *encoder
	p    profile
	tmp  []byte // scratch for composing strings
	now  uint64 // the request's base timestamp, Unix ns
	base uint64 // the time of seed 0, Unix ns
	perm []int  // scratch permutation for picking attributes
	// drift, set by Config.Repeat, makes gauge values drift from seed to
	// seed, by the phase wobble.
	drift  bool
	wobble float64
	// jit, set by Config.Noise, draws the per-seed noise; nil without it.
	jit  *rand.Rand
	copy int // Config.Copy
}

// baseTime is 2026-01-01T00:00:00Z in Unix nanoseconds.
const baseTime = 1_767_225_600_000_000_000

func newGen(cfg Config, stream uint64, p profile) gen {
	content := uint64(cfg.Seed)
	if cfg.Repeat {
		content = 0
	}
	g := gen{r: rand.New(rand.NewPCG(content, stream)), p: p, e: newEncoder(cfg.Order)}
	g.base = baseTime
	if !cfg.Start.IsZero() {
		g.base = uint64(cfg.Start.UnixNano())
	}
	g.now = g.base + uint64(cfg.Seed)%(366*24*3600)*1e9
	if cfg.Repeat {
		g.drift, g.wobble = true, 2*math.Pi*float64(cfg.Seed)/60
		if cfg.Noise {
			g.jit = rand.New(rand.NewPCG(uint64(cfg.Seed), stream^0x6e6f697365))
		}
	}
	g.copy = cfg.Copy
	return g
}

// layout writes the common request → resource → scope structure. resource
// writes the fields of Resource ri; scope the fields of the scope of scope
// container si of resource ri and returns its schema URL; records writes n
// records into that scope container.
func (g *gen) layout(cfg Config, resource func(ri int), scope func(ri, si int) (schemaURL string), records func(ri, si, n int)) []byte {
	for ri := range max(cfg.Resources, 0) {
		g.e.begin(requestResources)
		g.e.begin(resourceContainerResource)
		resource(ri)
		g.e.end()
		for si := range max(cfg.ScopesPerResource, 0) {
			g.e.begin(resourceContainerScopes)
			g.e.begin(scopeContainerScope)
			url := scope(ri, si)
			g.e.end()
			records(ri, si, cfg.records(ri, si))
			g.e.str(scopeContainerSchemaURL, url)
			g.e.end()
		}
		g.e.str(resourceContainerSchemaURL, resourceSchemaURL)
		g.e.end()
	}
	return g.e.finish()
}

// attrCount returns how many attributes a record gets: the profile's range,
// or lo..hi when the profile does not set one.
func (g *gen) attrCount(lo, hi int) int {
	if g.p.recordAttrs[1] > 0 {
		lo, hi = g.p.recordAttrs[0], g.p.recordAttrs[1]
	}
	return lo + g.r.IntN(hi-lo+1)
}

// pick returns k distinct indices below n, in random order; the result is
// valid until the next call.
func (g *gen) pick(k, n int) []int {
	if len(g.perm) != n {
		g.perm = g.perm[:0]
		for i := range n {
			g.perm = append(g.perm, i)
		}
	}
	k = min(k, n)
	for i := range k {
		j := i + g.r.IntN(n-i)
		g.perm[i], g.perm[j] = g.perm[j], g.perm[i]
	}
	return g.perm[:k]
}

// chance reports true with probability p.
func (g *gen) chance(p float64) bool { return g.r.Float64() < p }

// traceID returns a random non-zero trace id.
func (g *gen) traceID() (id [16]byte) {
	hi, lo := g.r.Uint64(), g.r.Uint64()
	if hi|lo == 0 {
		lo = 1
	}
	binary.BigEndian.PutUint64(id[:8], hi)
	binary.BigEndian.PutUint64(id[8:], lo)
	return id
}

// spanID returns a random non-zero span id.
func (g *gen) spanID() (id [8]byte) {
	v := g.r.Uint64()
	if v == 0 {
		v = 1
	}
	binary.BigEndian.PutUint64(id[:], v)
	return id
}
