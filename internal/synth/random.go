package synth

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/wirehouse/wirehouse/otlpwire"
	"google.golang.org/protobuf/encoding/protowire"
)

// Random returns a request of signal s in order o with a random shape, for
// equivalence tests and fuzz seeds: 0-4 resources, 0-3 scopes each and 0-6
// log records, spans or metrics per scope (0-3 data points per metric).
// Every field appears at random: missing, present with its zero value, or
// set; attribute values of every AnyValue kind, nested up to depth 3;
// non-string bodies; negative ints, extreme timestamps and doubles (never
// NaN or ±Inf); ids that are empty or full length; all five metric kinds
// with their optional fields and double and int exemplars; and now and
// then unknown fields (numbers 100-999 and 2^29-1, every wire type but
// groups) at any level.
//
// Random draws from r the same way for both orders, so two sources with
// the same state yield requests that decode to the same data. It panics if
// s is not a valid otlpwire.Signal. The result is a new slice.
func Random(r *rand.Rand, s otlpwire.Signal, o Order) []byte {
	g := &randGen{r: r, e: newEncoder(o)}
	g.unknowns()
	for range r.IntN(5) {
		g.e.begin(requestResources)
		g.unknowns()
		g.resourceContainer(s)
		g.unknowns()
		g.e.end()
	}
	g.unknowns()
	return g.e.finish()
}

// randGen writes random messages.
type randGen struct {
	r   *rand.Rand
	e   *encoder
	tmp []byte
}

func (g *randGen) chance(p float64) bool { return g.r.Float64() < p }

// unknowns writes 1-3 unknown fields, now and then.
func (g *randGen) unknowns() {
	if !g.chance(0.04) {
		return
	}
	for range 1 + g.r.IntN(3) {
		num := protowire.Number(100 + g.r.IntN(900))
		if g.chance(0.1) {
			num = protowire.MaxValidNumber
		}
		switch g.r.IntN(4) {
		case 0:
			g.e.varintAlways(num, g.r.Uint64()>>g.r.IntN(64))
		case 1:
			g.e.fixed32Always(num, g.r.Uint32())
		case 2:
			g.e.fixed64Always(num, g.r.Uint64())
		default:
			g.tmp = g.tmp[:0]
			for range g.r.IntN(12) {
				g.tmp = append(g.tmp, byte(g.r.Uint32()))
			}
			g.e.bytesAlways(num, g.tmp)
		}
	}
}

// presence is how a random scalar field is written.
func (g *randGen) presence() (write, zero bool) {
	switch x := g.r.IntN(10); {
	case x < 3:
		return false, false
	case x < 4:
		return true, true
	}
	return true, false
}

func (g *randGen) varint(num protowire.Number, v uint64) {
	if write, zero := g.presence(); zero {
		g.e.varintAlways(num, 0)
	} else if write {
		g.e.varint(num, v)
	}
}

func (g *randGen) fixed32(num protowire.Number, v uint32) {
	if write, zero := g.presence(); zero {
		g.e.fixed32Always(num, 0)
	} else if write {
		g.e.fixed32(num, v)
	}
}

func (g *randGen) fixed64(num protowire.Number, v uint64) {
	if write, zero := g.presence(); zero {
		g.e.fixed64Always(num, 0)
	} else if write {
		g.e.fixed64(num, v)
	}
}

func (g *randGen) double(num protowire.Number, v float64) {
	if write, zero := g.presence(); zero {
		g.e.doubleAlways(num, 0)
	} else if write {
		g.e.double(num, v)
	}
}

func (g *randGen) str(num protowire.Number) {
	if write, zero := g.presence(); zero {
		g.e.strAlways(num, "")
	} else if write {
		g.e.bytes(num, g.text())
	}
}

// id writes a trace or span id of n bytes: missing, empty or random.
func (g *randGen) id(num protowire.Number, n int) {
	if write, zero := g.presence(); zero {
		g.e.bytesAlways(num, nil)
	} else if write {
		g.tmp = g.tmp[:0]
		for range n {
			g.tmp = append(g.tmp, byte(g.r.Uint32()))
		}
		g.e.bytes(num, g.tmp)
	}
}

var randWords = []string{"", "a", "checkout", "GET /api/v1/orders/{id}", "héllo wörld", "日本語のログ", "emoji 🚀🔥", "tab\tand\nnewline", `quote " and \ backslash`, "\x00nul"}

// text returns a random string, valid until the next call.
func (g *randGen) text() []byte {
	g.tmp = g.tmp[:0]
	switch g.r.IntN(4) {
	case 0:
		g.tmp = append(g.tmp, randWords[g.r.IntN(len(randWords))]...)
	case 1:
		for range g.r.IntN(200) {
			g.tmp = append(g.tmp, byte('a'+g.r.IntN(26)))
		}
	default:
		g.tmp = fmt.Appendf(g.tmp, "%s-%d", randWords[g.r.IntN(len(randWords))], g.r.IntN(1000))
	}
	return g.tmp
}

// timestamp returns a realistic, small or huge Unix nanosecond time.
func (g *randGen) timestamp() uint64 {
	switch g.r.IntN(6) {
	case 0:
		return math.MaxUint64 - uint64(g.r.IntN(1000))
	case 1:
		return uint64(g.r.IntN(1000))
	case 2:
		return g.r.Uint64()
	}
	return baseTime + uint64(g.r.Int64N(int64(365*24*3600*1e9)))
}

// int64 returns a small, negative or extreme int.
func (g *randGen) int64() int64 {
	switch g.r.IntN(6) {
	case 0:
		return math.MinInt64
	case 1:
		return math.MaxInt64
	case 2:
		return -g.r.Int64N(1000)
	case 3:
		return int64(g.r.Uint64())
	}
	return g.r.Int64N(1000)
}

var randDoubles = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 123456.789}

// float returns a random finite double.
func (g *randGen) float() float64 {
	if g.chance(0.3) {
		return randDoubles[g.r.IntN(len(randDoubles))]
	}
	return (g.r.Float64() - 0.3) * math.Pow(10, float64(g.r.IntN(20)-6))
}

// anyValue writes an AnyValue field num; nested arrays and kvlists stop at depth 3.
func (g *randGen) anyValue(num protowire.Number, depth int) {
	e := g.e
	e.begin(num)
	g.unknowns()
	kinds := 9
	if depth >= 3 {
		kinds = 7
	}
	switch g.r.IntN(kinds) {
	case 0: // empty: no value at all
	case 1:
		e.bytesAlways(anyValueString, g.text())
	case 2:
		e.boolAlways(anyValueBool, g.chance(0.5))
	case 3:
		e.varintAlways(anyValueInt, uint64(g.int64()))
	case 4:
		e.doubleAlways(anyValueDouble, g.float())
	case 5:
		g.tmp = g.tmp[:0]
		for range g.r.IntN(20) {
			g.tmp = append(g.tmp, byte(g.r.Uint32()))
		}
		e.bytesAlways(anyValueBytes, g.tmp)
	case 6:
		e.strAlways(anyValueString, "")
	case 7:
		e.begin(anyValueArray)
		g.unknowns()
		for range g.r.IntN(4) {
			g.anyValue(arrayValueValues, depth+1)
		}
		e.end()
	case 8:
		e.begin(anyValueKvlist)
		g.unknowns()
		g.attrs(keyValueListValues, 4, depth+1)
		e.end()
	}
	g.unknowns()
	e.end()
}

// attrs writes up to max KeyValue fields num whose values nest from depth.
func (g *randGen) attrs(num protowire.Number, max, depth int) {
	for range g.r.IntN(max + 1) {
		g.e.begin(num)
		g.unknowns()
		if !g.chance(0.05) {
			g.e.bytesAlways(keyValueKey, g.text())
		}
		if !g.chance(0.1) {
			g.anyValue(keyValueValue, depth)
		}
		g.unknowns()
		g.e.end()
	}
}

// resourceContainer writes the fields of a ResourceLogs, ResourceSpans or
// ResourceMetrics.
func (g *randGen) resourceContainer(s otlpwire.Signal) {
	e := g.e
	if !g.chance(0.15) {
		e.begin(resourceContainerResource)
		g.unknowns()
		g.attrs(resourceAttributes, 6, 0)
		g.varint(resourceDroppedAttrs, uint64(g.r.IntN(10)))
		g.unknowns()
		e.end()
	}
	for range g.r.IntN(4) {
		e.begin(resourceContainerScopes)
		g.unknowns()
		if !g.chance(0.15) {
			e.begin(scopeContainerScope)
			g.unknowns()
			g.str(scopeName)
			g.str(scopeVersion)
			g.attrs(scopeAttributes, 3, 0)
			g.varint(scopeDroppedAttrs, uint64(g.r.IntN(10)))
			g.unknowns()
			e.end()
		}
		for range g.r.IntN(7) {
			e.begin(scopeContainerRecords)
			g.unknowns()
			switch s {
			case otlpwire.SignalLogs:
				g.logRecord()
			case otlpwire.SignalTraces:
				g.span()
			case otlpwire.SignalMetrics:
				g.metric()
			default:
				panic(fmt.Sprintf("synth: invalid signal %d", int(s)))
			}
			g.unknowns()
			e.end()
		}
		g.str(scopeContainerSchemaURL)
		g.unknowns()
		e.end()
	}
	g.str(resourceContainerSchemaURL)
}

// logRecord writes the fields of a LogRecord.
func (g *randGen) logRecord() {
	g.fixed64(logTime, g.timestamp())
	g.fixed64(logObservedTime, g.timestamp())
	g.varint(logSeverityNumber, uint64(g.r.IntN(26)))
	g.str(logSeverityText)
	if !g.chance(0.1) {
		g.anyValue(logBody, 0)
	}
	g.attrs(logAttributes, 6, 0)
	g.varint(logDroppedAttrs, uint64(g.r.Uint32()))
	g.fixed32(logFlags, g.r.Uint32())
	g.id(logTraceID, 16)
	g.id(logSpanID, 8)
	g.str(logEventName)
}

// span writes the fields of a Span.
func (g *randGen) span() {
	e := g.e
	g.id(spanTraceID, 16)
	g.id(spanSpanID, 8)
	g.str(spanTraceState)
	g.id(spanParentSpanID, 8)
	g.fixed32(spanFlags, g.r.Uint32())
	g.str(spanName)
	g.varint(spanKind, uint64(g.r.IntN(6)))
	g.fixed64(spanStartTime, g.timestamp())
	g.fixed64(spanEndTime, g.timestamp())
	g.attrs(spanAttributes, 6, 0)
	g.varint(spanDroppedAttrs, uint64(g.r.Uint32()))
	for range g.r.IntN(4) {
		e.begin(spanEvents)
		g.unknowns()
		g.fixed64(eventTime, g.timestamp())
		g.str(eventName)
		g.attrs(eventAttributes, 3, 0)
		g.varint(eventDroppedAttrs, uint64(g.r.IntN(5)))
		g.unknowns()
		e.end()
	}
	g.varint(spanDroppedEvents, uint64(g.r.IntN(5)))
	for range g.r.IntN(4) {
		e.begin(spanLinks)
		g.unknowns()
		g.id(linkTraceID, 16)
		g.id(linkSpanID, 8)
		g.str(linkTraceState)
		g.attrs(linkAttributes, 3, 0)
		g.varint(linkDroppedAttrs, uint64(g.r.IntN(5)))
		g.fixed32(linkFlags, g.r.Uint32())
		g.unknowns()
		e.end()
	}
	g.varint(spanDroppedLinks, uint64(g.r.IntN(5)))
	if !g.chance(0.2) {
		e.begin(spanStatus)
		g.unknowns()
		g.str(statusMessage)
		g.varint(statusCode, uint64(g.r.IntN(3)))
		g.unknowns()
		e.end()
	}
}
