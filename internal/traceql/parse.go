package traceql

import (
	"slices"
	"strconv"
)

// MaxQueryLength bounds the queries Parse takes, so that a request cannot
// make it build an arbitrarily large tree.
const MaxQueryLength = 64 << 10

// maxDepth bounds nesting (parentheses, operators).
const maxDepth = 200

// Parse parses a TraceQL query. The error of a malformed query is a
// *ParseError, with the line and column of the problem.
func Parse(query string) (*Query, error) {
	if len(query) > MaxQueryLength {
		return nil, errorAt(query, MaxQueryLength, "query longer than %d bytes", MaxQueryLength)
	}
	toks, err := lex(query)
	if err != nil {
		return nil, err
	}
	p := &parser{query: query, toks: toks}
	q := p.query1()
	if p.err == nil && p.peek().kind != kEOF {
		p.fail(p.peek().pos, "unexpected %s", p.peek())
	}
	if p.err != nil {
		return nil, p.err
	}
	return q, nil
}

type parser struct {
	query string
	toks  []token
	i     int
	err   *ParseError
	depth int
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) peekAt(n int) token { return p.toks[min(p.i+n, len(p.toks)-1)] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != kEOF {
		p.i++
	}
	return t
}

// fail records the first error and stops the parse: every later read is
// the end of the query.
func (p *parser) fail(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = errorAt(p.query, pos, format, args...)
	}
	p.i = len(p.toks) - 1
}

func (p *parser) isOp(s string) bool { t := p.peek(); return t.kind == kOp && t.text == s }

func (p *parser) isWord(s string) bool { t := p.peek(); return t.kind == kIdent && t.text == s }

func (p *parser) expect(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	p.fail(p.peek().pos, "unexpected %s, expected %q", p.peek(), op)
	return false
}

// enter counts a level of nesting; it fails past maxDepth.
func (p *parser) enter() bool {
	p.depth++
	if p.depth > maxDepth {
		p.fail(p.peek().pos, "query nested deeper than %d", maxDepth)
		return false
	}
	return true
}

func (p *parser) leave() { p.depth-- }

// metricsFns are the metrics functions and whether each takes a field.
var metricsFns = map[string]bool{
	"rate": false, "count_over_time": false, "min_over_time": true, "max_over_time": true,
	"avg_over_time": true, "sum_over_time": true, "quantile_over_time": true, "histogram_over_time": true,
	"compare": false,
}

// aggregates are the functions of a scalar filter.
var aggregates = map[string]bool{"count": true, "avg": true, "min": true, "max": true, "sum": true}

// query1 parses a whole query.
func (p *parser) query1() *Query {
	q := &Query{}
	q.Pipeline = p.pipeline(true)
	if p.err != nil {
		return q
	}
	if p.isOp("|") && p.peekAt(1).kind == kIdent && isMetricsFn(p.peekAt(1).text, p.peekAt(2)) {
		p.next()
		q.Metrics = p.metrics()
		if p.isOp("|") && (p.peekAt(1).text == "topk" || p.peekAt(1).text == "bottomk") {
			p.next()
			q.Rank = p.next().text
			p.expect("(")
			q.RankN = p.positiveInt("topk and bottomk take")
			p.expect(")")
		}
	}
	if p.isWord("with") {
		p.next()
		q.Hints = p.hints()
	}
	return q
}

func isMetricsFn(word string, after token) bool {
	_, ok := metricsFns[word]
	return ok && after.kind == kOp && after.text == "("
}

// pipeline parses a spanset expression and the stages after it; top
// says whether it is the query's own, which a metrics function may end.
func (p *parser) pipeline(top bool) Pipeline {
	pl := Pipeline{Stages: []Stage{SpansetStage{p.spanset(0)}}}
	for p.err == nil && p.isOp("|") {
		if top && p.peekAt(1).kind == kIdent && isMetricsFn(p.peekAt(1).text, p.peekAt(2)) {
			break
		}
		p.next()
		pl.Stages = append(pl.Stages, p.stage())
	}
	return pl
}

// spansetPrec is each spanset operator's binding: structural operators
// bind tighter than && and ||.
var spansetPrec = map[string]int{
	"||": 1, "&&": 2,
	">": 3, ">>": 3, "<": 3, "<<": 3, "~": 3, "!>": 3, "!>>": 3, "!<": 3, "!<<": 3, "!~": 3,
	"&>": 3, "&>>": 3, "&<": 3, "&<<": 3, "&~": 3,
}

// spanset parses spanset operators of at least precedence min, left to
// right.
func (p *parser) spanset(min int) Spanset {
	if !p.enter() {
		return Filter{}
	}
	defer p.leave()
	left := p.spansetPrimary()
	for p.err == nil {
		t := p.peek()
		prec, ok := spansetPrec[t.text]
		if t.kind != kOp || !ok || prec < min {
			return left
		}
		p.next()
		right := p.spanset(prec + 1)
		left = SpansetOp{Op: t.text, L: left, R: right}
	}
	return left
}

func (p *parser) spansetPrimary() Spanset {
	t := p.peek()
	switch {
	case t.kind == kOp && t.text == "{":
		p.next()
		if p.isOp("}") {
			p.next()
			return Filter{}
		}
		e := p.field(0)
		if p.err == nil && !mayBeBoolean(e) {
			p.fail(t.pos+1, "a spanset filter must be a condition, not %s", e)
		}
		p.expect("}")
		return Filter{Expr: e}
	case t.kind == kOp && t.text == "(":
		p.next()
		pl := p.pipeline(false)
		p.expect(")")
		if len(pl.Stages) == 1 {
			return pl.Stages[0].(SpansetStage).Spanset
		}
		return pl
	}
	p.fail(t.pos, "unexpected %s, expected a spanset filter { ... }", t)
	return Filter{}
}

// mayBeBoolean reports whether a filter's expression can be true: a
// comparison, a logical operator, a boolean literal or an attribute
// (true where the span has it as the boolean true).
func mayBeBoolean(f Field) bool {
	switch f := f.(type) {
	case Binary:
		return slices.Contains([]string{"&&", "||", "=", "!=", ">", ">=", "<", "<=", "=~", "!~"}, f.Op)
	case Unary:
		return f.Op == "!"
	case Static:
		return f.Type == TypeBool
	case Attribute:
		return true
	}
	return false
}

// stage parses one pipeline stage after a |.
func (p *parser) stage() Stage {
	t := p.peek()
	switch {
	case t.kind == kOp && t.text == "{",
		t.kind == kOp && t.text == "(" && !(p.peekAt(1).kind == kIdent && aggregates[p.peekAt(1).text]):
		return SpansetStage{p.spanset(0)}
	case t.kind == kIdent && (t.text == "by" || t.text == "select"):
		p.next()
		fs := p.fieldList()
		if t.text == "by" {
			return By{Fields: fs}
		}
		return Select{Fields: fs}
	case t.kind == kIdent && t.text == "coalesce":
		p.next()
		p.expect("(")
		p.expect(")")
		return Coalesce{}
	}
	l := p.scalar(0)
	op := p.peek()
	if op.kind != kOp || !isComparison(op.text) || op.text == "=~" || op.text == "!~" {
		p.fail(op.pos, "unexpected %s, expected a comparison after %s", op, l)
		return ScalarFilter{}
	}
	p.next()
	r := p.scalar(0)
	if p.err == nil && !HasAggregate(l) && !HasAggregate(r) {
		p.fail(t.pos, "a pipeline's filter must compare an aggregate such as count()")
	}
	return ScalarFilter{Op: op.text, L: l, R: r}
}

func isComparison(op string) bool {
	switch op {
	case "=", "!=", ">", ">=", "<", "<=", "=~", "!~":
		return true
	}
	return false
}

// HasAggregate reports whether s reads an aggregate of a spanset.
func HasAggregate(s Scalar) bool {
	switch s := s.(type) {
	case Aggregate:
		return true
	case ScalarBinary:
		return HasAggregate(s.L) || HasAggregate(s.R)
	}
	return false
}

// fieldList parses ( field, ... ), at least one.
func (p *parser) fieldList() []Field {
	p.expect("(")
	var fs []Field
	for p.err == nil {
		fs = append(fs, p.field(0))
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	return fs
}

// arithPrec is the binding of the arithmetic operators, shared by fields
// and scalars; ^ binds right to left.
var arithPrec = map[string]int{"+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "^": 6}

// fieldPrec is each field operator's binding.
func fieldPrec(op string) int {
	switch op {
	case "||":
		return 1
	case "&&":
		return 2
	}
	if isComparison(op) {
		return 3
	}
	return arithPrec[op]
}

// field parses a field expression of operators of at least precedence
// min.
func (p *parser) field(min int) Field {
	if !p.enter() {
		return Static{}
	}
	defer p.leave()
	left := p.fieldUnary()
	for p.err == nil {
		t := p.peek()
		prec := fieldPrec(t.text)
		if t.kind != kOp || prec == 0 || prec < min {
			return left
		}
		p.next()
		next := prec + 1
		if t.text == "^" {
			next = prec
		}
		right := p.field(next)
		if p.err == nil && (t.text == "=~" || t.text == "!~") {
			if s, ok := right.(Static); !ok || s.Type != TypeString {
				p.fail(t.pos, "%s takes a string", t.text)
			}
		}
		left = Binary{Op: t.text, L: left, R: right}
		if prec == 3 && isComparison(p.peek().text) && p.peek().kind == kOp {
			p.fail(p.peek().pos, "comparisons cannot be chained: use &&")
		}
	}
	return left
}

func (p *parser) fieldUnary() Field {
	t := p.peek()
	if t.kind == kOp && (t.text == "!" || t.text == "-") {
		p.next()
		if !p.enter() {
			return Static{}
		}
		defer p.leave()
		x := p.fieldUnary()
		if s, ok := x.(Static); ok && t.text == "-" {
			switch s.Type { // a negative literal
			case TypeInt:
				return Static{Type: TypeInt, I: -s.I}
			case TypeFloat:
				return Static{Type: TypeFloat, F: -s.F}
			case TypeDuration:
				return Static{Type: TypeDuration, I: -s.I}
			}
		}
		return Unary{Op: t.text, X: x}
	}
	return p.fieldPrimary()
}

func (p *parser) fieldPrimary() Field {
	t := p.next()
	switch t.kind {
	case kAttr:
		return Attribute{Scope: t.scope, Name: t.text}
	case kIntr:
		if in, ok := intrinsicWords[t.text]; ok {
			return in
		}
		p.fail(t.pos, "unknown intrinsic %s", t)
		return Static{}
	case kOp:
		if t.text == "(" {
			e := p.field(0)
			p.expect(")")
			return e
		}
	case kEOF:
		p.fail(t.pos, "unexpected end of query, expected a value")
		return Static{}
	case kIdent:
		if in, ok := intrinsicWords[t.text]; ok {
			return in
		}
		if s, ok := enumWord(t.text); ok {
			return s
		}
		p.fail(t.pos, "unknown word %s: an attribute needs a scope (span., resource., or a leading dot)", t)
		return Static{}
	}
	if s, ok := p.literal(t); ok {
		return s
	}
	p.fail(t.pos, "unexpected %s, expected a value", t)
	return Static{}
}

// enumWord is a literal written as a word: booleans, nil, statuses and
// kinds.
func enumWord(w string) (Static, bool) {
	switch w {
	case "true", "false":
		return Static{Type: TypeBool, B: w == "true"}, true
	case "nil":
		return Static{Type: TypeNil}, true
	}
	for i, n := range statusNames {
		if n == w {
			return Static{Type: TypeStatus, I: int64(i)}, true
		}
	}
	for i, n := range kindNames {
		if n == w {
			return Static{Type: TypeKind, I: int64(i)}, true
		}
	}
	return Static{}, false
}

// literal converts a string, number or duration token.
func (p *parser) literal(t token) (Static, bool) {
	switch t.kind {
	case kString:
		return Static{Type: TypeString, S: t.text}, true
	case kInt:
		n, _ := strconv.ParseInt(t.text, 10, 64) // checked by the lexer
		return Static{Type: TypeInt, I: n}, true
	case kFloat:
		f, _ := strconv.ParseFloat(t.text, 64)
		return Static{Type: TypeFloat, F: f}, true
	case kDuration:
		return Static{Type: TypeDuration, I: int64(t.dur)}, true
	}
	return Static{}, false
}

// scalar parses a pipeline's scalar expression of operators of at least
// precedence min.
func (p *parser) scalar(min int) Scalar {
	if !p.enter() {
		return Static{}
	}
	defer p.leave()
	left := p.scalarPrimary()
	for p.err == nil {
		t := p.peek()
		prec, ok := arithPrec[t.text]
		if t.kind != kOp || !ok || prec < min {
			return left
		}
		p.next()
		next := prec + 1
		if t.text == "^" {
			next = prec
		}
		left = ScalarBinary{Op: t.text, L: left, R: p.scalar(next)}
	}
	return left
}

func (p *parser) scalarPrimary() Scalar {
	t := p.next()
	switch {
	case t.kind == kIdent && aggregates[t.text]:
		p.expect("(")
		a := Aggregate{Fn: t.text}
		if t.text != "count" {
			a.Field = p.field(0)
		}
		p.expect(")")
		return a
	case t.kind == kOp && t.text == "(":
		s := p.scalar(0)
		p.expect(")")
		return s
	case t.kind == kOp && t.text == "-":
		if s, ok := p.literal(p.peek()); ok && s.Type != TypeString {
			p.next()
			s.I, s.F = -s.I, -s.F
			return s
		}
	}
	if s, ok := p.literal(t); ok && s.Type != TypeString {
		return s
	}
	p.fail(t.pos, "unexpected %s, expected an aggregate (count, avg, min, max, sum) or a number", t)
	return Static{}
}

// metrics parses a metrics function and its by().
func (p *parser) metrics() *Metrics {
	t := p.next()
	m := &Metrics{Fn: t.text}
	p.expect("(")
	switch {
	case t.text == "compare":
		m.Compare = &Compare{Selection: p.spanset(0)}
		var n []int64
		for p.err == nil && p.isOp(",") && len(n) < 3 {
			p.next()
			n = append(n, p.intArg())
		}
		if len(n) == 2 {
			p.fail(p.peek().pos, "compare takes a selection, then a top N, then a start and an end together")
		}
		if len(n) > 0 {
			m.Compare.TopN = int(n[0])
		}
		if len(n) == 3 {
			m.Compare.Start, m.Compare.End = n[1], n[2]
		}
	case metricsFns[t.text]:
		m.Field = p.field(0)
		if t.text == "quantile_over_time" {
			for p.err == nil && p.isOp(",") {
				p.next()
				q := p.next()
				f, err := strconv.ParseFloat(q.text, 64)
				if (q.kind != kFloat && q.kind != kInt) || err != nil || f < 0 || f > 1 {
					p.fail(q.pos, "a quantile must be a number from 0 to 1, not %s", q)
				}
				m.Quantiles = append(m.Quantiles, f)
			}
			if p.err == nil && len(m.Quantiles) == 0 {
				p.fail(p.peek().pos, "quantile_over_time takes a field and at least one quantile")
			}
		}
	}
	p.expect(")")
	if p.isWord("by") {
		p.next()
		m.By = p.fieldList()
	}
	return m
}

// intArg parses a non-negative integer argument.
func (p *parser) intArg() int64 {
	t := p.next()
	n, err := strconv.ParseInt(t.text, 10, 64)
	if t.kind != kInt || err != nil || n < 0 {
		p.fail(t.pos, "unexpected %s, expected a non-negative integer", t)
	}
	return n
}

// positiveInt parses an integer of at least 1 (what says who takes it).
func (p *parser) positiveInt(what string) int {
	t := p.next()
	n, err := strconv.Atoi(t.text)
	if t.kind != kInt || err != nil || n < 1 {
		p.fail(t.pos, "%s a positive integer, not %s", what, t)
	}
	return n
}

// hints parses ( key = value, ... ) after with.
func (p *parser) hints() []Hint {
	p.expect("(")
	var hs []Hint
	for p.err == nil {
		k := p.next()
		if k.kind != kIdent {
			p.fail(k.pos, "unexpected %s, expected a hint's name", k)
			break
		}
		p.expect("=")
		v := p.next()
		s, ok := p.literal(v)
		if !ok && v.kind == kIdent {
			s, ok = enumWord(v.text)
		}
		if !ok {
			p.fail(v.pos, "unexpected %s, expected a hint's value", v)
		}
		hs = append(hs, Hint{Key: k.text, Value: s})
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	return hs
}
