package logql

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Expr is a parsed query: a *LogQuery or a metric expression
// (*RangeAggregation, *VectorAggregation, *BinaryOp, *Literal).
type Expr interface {
	fmt.Stringer
	expr()
}

// MatchOp is a matcher's or a string label filter's operator.
type MatchOp string

const (
	MatchEqual     MatchOp = "="
	MatchNotEqual  MatchOp = "!="
	MatchRegexp    MatchOp = "=~"
	MatchNotRegexp MatchOp = "!~"
)

// Matcher is a stream selector's label matcher.
type Matcher struct {
	Name  string
	Op    MatchOp
	Value string
}

func (m Matcher) String() string { return m.Name + string(m.Op) + strconv.Quote(m.Value) }

// LogQuery is a stream selector and its pipeline.
type LogQuery struct {
	Matchers []Matcher
	Pipeline []Stage
}

func (*LogQuery) expr() {}

func (q *LogQuery) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range q.Matchers {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(m.String())
	}
	b.WriteByte('}')
	for _, s := range q.Pipeline {
		b.WriteByte(' ')
		b.WriteString(s.String())
	}
	return b.String()
}

// Stage is a pipeline stage: *LineFilter, *Parser, *LabelFilter,
// *LineFormat, *LabelFormat, *DropKeep, *Decolorize.
type Stage interface {
	fmt.Stringer
	stage()
}

// LineFilterOp is a line filter's operator.
type LineFilterOp string

const (
	LineContains    LineFilterOp = "|="
	LineNotContains LineFilterOp = "!="
	LineMatches     LineFilterOp = "|~"
	LineNotMatches  LineFilterOp = "!~"
	LinePattern     LineFilterOp = "|>"
	LineNotPattern  LineFilterOp = "!>"
)

// LineFilter keeps the lines that contain (or match) one of Values, or,
// for the negative operators, none of them.
type LineFilter struct {
	Op     LineFilterOp
	Values []string // more than one: "or"-chained
}

func (*LineFilter) stage() {}

func (f *LineFilter) String() string {
	var b strings.Builder
	b.WriteString(string(f.Op))
	for i, v := range f.Values {
		if i > 0 {
			b.WriteString(" or")
		}
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(v))
	}
	return b.String()
}

// ParserKind is a parser stage's kind.
type ParserKind string

const (
	ParseJSON    ParserKind = "json"
	ParseLogfmt  ParserKind = "logfmt"
	ParseRegexp  ParserKind = "regexp"
	ParsePattern ParserKind = "pattern"
	ParseUnpack  ParserKind = "unpack"
)

// Parser extracts labels from the line: json and logfmt (all fields, or
// the named ones: Params), regexp and pattern (their expression).
type Parser struct {
	Kind   ParserKind
	Expr   string            // regexp and pattern
	Params []LabelExtraction // json and logfmt with named fields
	Flags  []string          // logfmt: --strict, --keep-empty
}

// LabelExtraction is a json or logfmt parameter: label=`field path`.
type LabelExtraction struct {
	Label, Path string
}

func (*Parser) stage() {}

func (p *Parser) String() string {
	var b strings.Builder
	b.WriteString("| ")
	b.WriteString(string(p.Kind))
	for _, f := range p.Flags {
		b.WriteString(" " + f)
	}
	if p.Kind == ParseRegexp || p.Kind == ParsePattern {
		b.WriteString(" " + strconv.Quote(p.Expr))
	}
	for i, e := range p.Params {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + e.Label + "=" + strconv.Quote(e.Path))
	}
	return b.String()
}

// LabelFilter keeps the lines whose labels pass Pred.
type LabelFilter struct{ Pred LabelPred }

func (*LabelFilter) stage() {}

func (f *LabelFilter) String() string { return "| " + f.Pred.String() }

// LabelPred is a label filter's predicate: *LabelCompare, *LabelAnd,
// *LabelOr.
type LabelPred interface {
	fmt.Stringer
	pred()
}

// CompareOp is a numeric label filter's operator.
type CompareOp string

// ValueKind is what a label filter compares with.
type ValueKind uint8

const (
	ValueString ValueKind = iota // =, !=, =~, !~ against a string
	ValueNumber                  // ==, !=, >, >=, <, <= against a number
	ValueDuration
	ValueBytes
)

// LabelCompare compares a label with a value.
type LabelCompare struct {
	Label string
	Op    string // "=", "!=", "=~", "!~", "==", ">", ">=", "<", "<="
	Kind  ValueKind
	Str   string  // ValueString
	Num   float64 // ValueNumber; ValueDuration in seconds; ValueBytes in bytes
	Text  string  // the value as written (numbers, durations, bytes)
}

func (*LabelCompare) pred() {}

func (c *LabelCompare) String() string {
	if c.Kind == ValueString {
		return c.Label + c.Op + strconv.Quote(c.Str)
	}
	return c.Label + c.Op + c.Text
}

// LabelAnd and LabelOr combine label predicates.
type (
	LabelAnd struct{ L, R LabelPred }
	LabelOr  struct{ L, R LabelPred }
)

func (*LabelAnd) pred()            {}
func (*LabelOr) pred()             {}
func (p *LabelAnd) String() string { return "(" + p.L.String() + " and " + p.R.String() + ")" }
func (p *LabelOr) String() string  { return "(" + p.L.String() + " or " + p.R.String() + ")" }

// LineFormat rewrites the line with a Go text/template over the labels.
type LineFormat struct{ Template string }

func (*LineFormat) stage()           {}
func (f *LineFormat) String() string { return "| line_format " + strconv.Quote(f.Template) }

// LabelFormat renames labels (dst=src) or sets them from templates
// (dst="template").
type LabelFormat struct{ Ops []LabelFormatOp }

// LabelFormatOp is one rename or template of a label_format stage.
type LabelFormatOp struct {
	Dst      string
	Src      string // a rename
	Template string // else a template
	Rename   bool
}

func (*LabelFormat) stage() {}

func (f *LabelFormat) String() string {
	var parts []string
	for _, o := range f.Ops {
		if o.Rename {
			parts = append(parts, o.Dst+"="+o.Src)
		} else {
			parts = append(parts, o.Dst+"="+strconv.Quote(o.Template))
		}
	}
	return "| label_format " + strings.Join(parts, ", ")
}

// DropKeep drops (or keeps only) labels, each by name or by name and
// value.
type DropKeep struct {
	Keep   bool
	Labels []Matcher // Op empty: by name alone
}

func (*DropKeep) stage() {}

func (d *DropKeep) String() string {
	var parts []string
	for _, m := range d.Labels {
		if m.Op == "" {
			parts = append(parts, m.Name)
		} else {
			parts = append(parts, m.String())
		}
	}
	if d.Keep {
		return "| keep " + strings.Join(parts, ", ")
	}
	return "| drop " + strings.Join(parts, ", ")
}

// Decolorize strips ANSI colour codes from the line.
type Decolorize struct{}

func (*Decolorize) stage()         {}
func (*Decolorize) String() string { return "| decolorize" }

// Unwrap takes the sample value of an unwrapped range aggregation from a
// label; Conv is "", "duration", "duration_seconds" or "bytes".
type Unwrap struct {
	Label, Conv string
}

func (u *Unwrap) String() string {
	if u.Conv != "" {
		return "| unwrap " + u.Conv + "(" + u.Label + ")"
	}
	return "| unwrap " + u.Label
}

// LogRange is a log query over a range: what a range aggregation reads.
type LogRange struct {
	Query  *LogQuery
	Unwrap *Unwrap // for the unwrapped aggregations
	// Filters after the unwrap (| __error__="" ...).
	PostFilters []*LabelFilter
	Range       time.Duration
	Offset      time.Duration
}

func (r *LogRange) String() string {
	s := r.Query.String()
	if r.Unwrap != nil {
		s += " " + r.Unwrap.String()
	}
	for _, f := range r.PostFilters {
		s += " " + f.String()
	}
	s += " [" + model.Duration(r.Range).String() + "]"
	if r.Offset != 0 {
		s += " offset " + model.Duration(r.Offset).String()
	}
	return s
}

// Grouping is an aggregation's by (...) or without (...).
type Grouping struct {
	Without bool
	Labels  []string
}

func (g *Grouping) String() string {
	if g == nil {
		return ""
	}
	w := "by"
	if g.Without {
		w = "without"
	}
	return " " + w + " (" + strings.Join(g.Labels, ", ") + ")"
}

// RangeAggregation is count_over_time, rate, bytes_over_time and the
// others, over a log range.
type RangeAggregation struct {
	Op       string
	Param    *float64 // quantile_over_time's φ
	Range    *LogRange
	Grouping *Grouping // for the unwrapped ones: by or without after the call
}

func (*RangeAggregation) expr() {}

func (a *RangeAggregation) String() string {
	s := a.Op + "("
	if a.Param != nil {
		s += strconv.FormatFloat(*a.Param, 'g', -1, 64) + ", "
	}
	return s + a.Range.String() + ")" + a.Grouping.String()
}

// VectorAggregation is sum, avg, min, max, count, stddev, stdvar, topk,
// bottomk, sort, sort_desc over an expression.
type VectorAggregation struct {
	Op       string
	Param    *float64 // topk and bottomk's k
	Grouping *Grouping
	Inner    Expr
}

func (*VectorAggregation) expr() {}

func (a *VectorAggregation) String() string {
	s := a.Op + a.Grouping.String()
	if a.Grouping != nil {
		s += " "
	}
	s += "("
	if a.Param != nil {
		s += strconv.FormatFloat(*a.Param, 'g', -1, 64) + ", "
	}
	return s + a.Inner.String() + ")"
}

// BinaryOp is an arithmetic, comparison or set operation between two
// expressions.
type BinaryOp struct {
	Op       string // + - * / % ^ == != > >= < <= and or unless
	Bool     bool   // a comparison returning 0 or 1
	Matching *VectorMatching
	L, R     Expr
}

// VectorMatching is on (...) or ignoring (...), with group_left or
// group_right.
type VectorMatching struct {
	On     bool
	Labels []string
	Group  string // "", "group_left" or "group_right"
	Extra  []string
}

func (*BinaryOp) expr() {}

func (b *BinaryOp) String() string {
	s := "(" + b.L.String() + " " + b.Op
	if b.Bool {
		s += " bool"
	}
	if m := b.Matching; m != nil {
		w := "ignoring"
		if m.On {
			w = "on"
		}
		s += " " + w + " (" + strings.Join(m.Labels, ", ") + ")"
		if m.Group != "" {
			s += " " + m.Group + " (" + strings.Join(m.Extra, ", ") + ")"
		}
	}
	return s + " " + b.R.String() + ")"
}

// Literal is a number.
type Literal struct{ Value float64 }

func (*Literal) expr()            {}
func (l *Literal) String() string { return strconv.FormatFloat(l.Value, 'g', -1, 64) }

// VectorLiteral is vector(x): one sample of value x with no labels.
type VectorLiteral struct{ Value float64 }

func (*VectorLiteral) expr() {}
func (v *VectorLiteral) String() string {
	return "vector(" + strconv.FormatFloat(v.Value, 'g', -1, 64) + ")"
}

// ParseDuration reads a duration as LogQL writes them: Go's (1.5s, 300ms,
// 1h30m) or Prometheus' (1d, 2w, 1y).
func ParseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	d, err := model.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("invalid duration %q", s)
	}
	return time.Duration(d), nil
}

// ParseBytes reads a byte size: 512B, 20MB (10^6), 1.5KiB (2^10); a
// plain number is bytes.
func ParseBytes(s string) (uint64, error) {
	i := 0
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	mult := map[string]float64{"": 1, "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18,
		"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60}[s[i:]]
	if mult == 0 || f*mult >= 1<<64 {
		return 0, fmt.Errorf("invalid byte size %q", s)
	}
	return uint64(f * mult), nil
}
