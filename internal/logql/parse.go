package logql

import (
	"regexp"
	"slices"
	"strconv"
	"time"
)

// MaxQueryLength bounds the queries Parse takes, so that a request cannot
// make it build an arbitrarily large tree.
const MaxQueryLength = 64 << 10

// Parse parses a LogQL query. The error of a malformed query is a
// *ParseError.
func Parse(query string) (Expr, error) {
	if len(query) > MaxQueryLength {
		return nil, newError(query, MaxQueryLength, "query longer than %d bytes", MaxQueryLength)
	}
	toks, err := lex(query)
	if err != nil {
		return nil, err
	}
	p := &parser{query: query, toks: toks}
	e := p.expr(0)
	if p.err == nil && p.peek().kind != tEOF {
		p.fail(p.peek().pos, "unexpected %s", p.peek())
	}
	if p.err != nil {
		return nil, p.err
	}
	return e, nil
}

type parser struct {
	query string
	toks  []token
	i     int
	err   *ParseError
	depth int
}

// maxDepth bounds nesting (parentheses, aggregations).
const maxDepth = 200

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) peekAt(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) fail(pos int, format string, args ...any) {
	if p.err == nil {
		p.err = newError(p.query, pos, format, args...)
	}
	p.i = len(p.toks) - 1 // stop: every further read is the end
}

func (p *parser) isOp(s string) bool    { t := p.peek(); return t.kind == tOp && t.text == s }
func (p *parser) isIdent(s string) bool { t := p.peek(); return t.kind == tIdent && t.text == s }

func (p *parser) expect(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	p.fail(p.peek().pos, "unexpected %s, expected %q", p.peek(), op)
	return false
}

func (p *parser) ident(what string) string {
	t := p.peek()
	if t.kind != tIdent {
		p.fail(t.pos, "unexpected %s, expected %s", t, what)
		return ""
	}
	p.next()
	return t.text
}

func (p *parser) str(what string) string {
	t := p.peek()
	if t.kind != tString {
		p.fail(t.pos, "unexpected %s, expected %s", t, what)
		return ""
	}
	p.next()
	return t.text
}

func (p *parser) number(what string) float64 {
	neg := false
	if p.isOp("-") {
		p.next()
		neg = true
	}
	t := p.peek()
	if t.kind != tNumber {
		p.fail(t.pos, "unexpected %s, expected %s", t, what)
		return 0
	}
	p.next()
	v, err := parseNumber(t.text)
	if err != nil {
		p.fail(t.pos, "%v", err)
	}
	if neg {
		v = -v
	}
	return v
}

func parseNumber(s string) (float64, error) {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v, nil
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, &strconv.NumError{Func: "number", Num: s, Err: strconv.ErrSyntax}
	}
	return float64(n), nil
}

func (p *parser) duration(what string) time.Duration {
	t := p.peek()
	if t.kind != tDuration {
		p.fail(t.pos, "unexpected %s, expected %s", t, what)
		return 0
	}
	p.next()
	d, err := ParseDuration(t.text)
	if err != nil {
		p.fail(t.pos, "%v", err)
	}
	return d
}

// Binary operators by precedence level, lowest first.
var binaryLevels = [][]string{
	{"or"},
	{"and", "unless"},
	{"==", "!=", ">", ">=", "<", "<="},
	{"+", "-"},
	{"*", "/", "%"},
	{"^"},
}

func (p *parser) binaryOpAt(level int) (string, bool) {
	t := p.peek()
	if t.kind != tOp && t.kind != tIdent {
		return "", false
	}
	return t.text, slices.Contains(binaryLevels[level], t.text)
}

// expr parses the binary operations from precedence level on.
func (p *parser) expr(level int) Expr {
	if level == len(binaryLevels) {
		return p.unary()
	}
	l := p.expr(level + 1)
	for p.err == nil {
		op, ok := p.binaryOpAt(level)
		if !ok {
			return l
		}
		opTok := p.next()
		b := &BinaryOp{Op: op, L: l}
		if p.isIdent("bool") {
			if level != 2 {
				p.fail(p.peek().pos, "bool modifier on %q: only comparisons take it", op)
				return nil
			}
			p.next()
			b.Bool = true
		}
		b.Matching = p.matching()
		var r Expr
		if op == "^" {
			r = p.expr(level) // right-associative
		} else {
			r = p.expr(level + 1)
		}
		b.R = r
		if p.err == nil {
			p.checkOperand(opTok.pos, l)
			p.checkOperand(opTok.pos, r)
		}
		l = b
		if op == "^" {
			return l
		}
	}
	return l
}

// checkOperand refuses a log query as an operand of a binary operation.
func (p *parser) checkOperand(pos int, e Expr) {
	if _, ok := e.(*LogQuery); ok {
		p.fail(pos, "a log query cannot be an operand of a binary operation; wrap it in a range aggregation such as count_over_time")
	}
}

// matching parses on (...) / ignoring (...) [group_left|group_right (...)].
func (p *parser) matching() *VectorMatching {
	if !p.isIdent("on") && !p.isIdent("ignoring") {
		return nil
	}
	m := &VectorMatching{On: p.next().text == "on"}
	m.Labels = p.labelList()
	if p.isIdent("group_left") || p.isIdent("group_right") {
		m.Group = p.next().text
		if p.isOp("(") {
			m.Extra = p.labelList()
		}
	}
	return m
}

// labelList parses ( name, ... ).
func (p *parser) labelList() []string {
	if !p.expect("(") {
		return nil
	}
	var out []string
	for p.err == nil && !p.isOp(")") {
		out = append(out, p.ident("a label name"))
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expect(")")
	return out
}

var rangeOps = map[string]bool{
	"count_over_time": false, "rate": false, "bytes_over_time": false, "bytes_rate": false, "absent_over_time": false,
	// the unwrapped ones
	"rate_counter": true, "sum_over_time": true, "avg_over_time": true, "max_over_time": true, "min_over_time": true,
	"first_over_time": true, "last_over_time": true, "stdvar_over_time": true, "stddev_over_time": true,
	"quantile_over_time": true,
}

var vectorOps = map[string]bool{
	"sum": false, "avg": false, "min": false, "max": false, "count": false, "stddev": false, "stdvar": false,
	"sort": false, "sort_desc": false, "topk": true, "bottomk": true, // true: takes a parameter
}

func (p *parser) unary() Expr {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.fail(p.peek().pos, "query nested more than %d deep", maxDepth)
		return nil
	}
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "-" || t.text == "+"):
		p.next()
		e := p.unary()
		if p.err != nil {
			return nil
		}
		if lit, ok := e.(*Literal); ok {
			if t.text == "-" {
				lit.Value = -lit.Value
			}
			return lit
		}
		if t.text == "+" {
			return e
		}
		return &BinaryOp{Op: "*", L: &Literal{Value: -1}, R: e}
	case t.kind == tNumber:
		return &Literal{Value: p.number("a number")}
	case t.kind == tOp && t.text == "(":
		p.next()
		e := p.expr(0)
		p.expect(")")
		return e
	case t.kind == tOp && t.text == "{":
		q := p.logQuery()
		if p.err == nil && p.isOp("[") {
			p.fail(p.peek().pos, "a log range [...] outside a range aggregation such as count_over_time")
		}
		return q
	case t.kind == tIdent:
		if _, ok := rangeOps[t.text]; ok && p.peekAt(1).kind == tOp && p.peekAt(1).text == "(" {
			return p.rangeAggregation()
		}
		if _, ok := vectorOps[t.text]; ok {
			return p.vectorAggregation()
		}
		if t.text == "vector" {
			p.next()
			p.expect("(")
			v := p.number("a number")
			p.expect(")")
			return &VectorLiteral{Value: v}
		}
	}
	p.fail(t.pos, "unexpected %s, expected a stream selector, a number, or a function such as count_over_time or sum", t)
	return nil
}

func (p *parser) rangeAggregation() Expr {
	op := p.next()
	a := &RangeAggregation{Op: op.text}
	p.expect("(")
	if op.text == "quantile_over_time" {
		v := p.number("the quantile")
		a.Param = &v
		p.expect(",")
	}
	if !p.isOp("{") {
		p.fail(p.peek().pos, "unexpected %s, expected a stream selector", p.peek())
		return nil
	}
	a.Range = p.logRange()
	p.expect(")")
	if p.err != nil {
		return nil
	}
	unwrapped := rangeOps[op.text]
	if unwrapped && a.Range.Unwrap == nil {
		p.fail(op.pos, "%s needs an unwrapped label: | unwrap <label>", op.text)
		return nil
	}
	if !unwrapped && a.Range.Unwrap != nil {
		p.fail(op.pos, "%s takes no unwrap", op.text)
		return nil
	}
	if p.isIdent("by") || p.isIdent("without") {
		if !unwrapped {
			p.fail(p.peek().pos, "%s takes no grouping", op.text)
			return nil
		}
		a.Grouping = p.grouping()
	}
	return a
}

func (p *parser) grouping() *Grouping {
	g := &Grouping{Without: p.next().text == "without"}
	g.Labels = p.labelList()
	return g
}

func (p *parser) vectorAggregation() Expr {
	op := p.next()
	a := &VectorAggregation{Op: op.text}
	if p.isIdent("by") || p.isIdent("without") {
		a.Grouping = p.grouping()
	}
	p.expect("(")
	if vectorOps[op.text] {
		v := p.number("the number of series")
		if p.err == nil && (v < 1 || v != float64(int64(v))) {
			p.fail(op.pos, "%s's parameter must be a positive integer, not %v", op.text, v)
			return nil
		}
		a.Param = &v
		p.expect(",")
	}
	a.Inner = p.expr(0)
	p.expect(")")
	if p.isIdent("by") || p.isIdent("without") {
		if a.Grouping != nil {
			p.fail(p.peek().pos, "a second grouping")
			return nil
		}
		a.Grouping = p.grouping()
	}
	if p.err == nil {
		p.checkOperand(op.pos, a.Inner)
	}
	return a
}

// logRange parses a log query with a range: {sel} pipeline [range] (or
// {sel} [range] pipeline), an unwrap, offset.
func (p *parser) logRange() *LogRange {
	r := &LogRange{Query: &LogQuery{}}
	r.Query.Matchers = p.selector()
	ranged := false
	for p.err == nil {
		if p.isOp("[") && !ranged {
			p.next()
			r.Range = p.duration("a range such as 5m")
			p.expect("]")
			ranged = true
			continue
		}
		if p.isOp("|") && p.peekAt(1).kind == tIdent && p.peekAt(1).text == "unwrap" {
			if r.Unwrap != nil {
				p.fail(p.peek().pos, "a second unwrap")
				return nil
			}
			p.next()
			p.next()
			r.Unwrap = p.unwrap()
			continue
		}
		if r.Unwrap != nil && p.isOp("|") {
			// Label filters after the unwrap: | __error__="" and such.
			pos := p.next().pos
			st := p.stage(pos)
			lf, ok := st.(*LabelFilter)
			if !ok && p.err == nil {
				p.fail(pos, "only label filters may follow an unwrap")
				return nil
			}
			r.PostFilters = append(r.PostFilters, lf)
			continue
		}
		if st, ok := p.pipelineStage(); ok {
			if st != nil {
				r.Query.Pipeline = append(r.Query.Pipeline, st)
			}
			continue
		}
		break
	}
	if p.err == nil && !ranged {
		p.fail(p.peek().pos, "unexpected %s, expected a range such as [5m]", p.peek())
		return nil
	}
	if p.isIdent("offset") {
		p.next()
		r.Offset = p.duration("an offset such as 1h")
	}
	if p.err == nil && r.Range <= 0 {
		p.fail(p.peek().pos, "the range must be positive")
	}
	return r
}

func (p *parser) unwrap() *Unwrap {
	u := &Unwrap{}
	name := p.ident("a label to unwrap")
	if p.isOp("(") {
		switch name {
		case "duration", "duration_seconds", "bytes":
		default:
			p.fail(p.peek().pos, "unknown unwrap conversion %q: duration, duration_seconds or bytes", name)
			return nil
		}
		p.next()
		u.Conv = name
		name = p.ident("a label to unwrap")
		p.expect(")")
	}
	u.Label = name
	return u
}

// logQuery parses {selector} pipeline.
func (p *parser) logQuery() *LogQuery {
	q := &LogQuery{Matchers: p.selector()}
	for p.err == nil {
		st, ok := p.pipelineStage()
		if !ok {
			break
		}
		if st != nil {
			q.Pipeline = append(q.Pipeline, st)
		}
	}
	return q
}

func (p *parser) selector() []Matcher {
	open := p.peek()
	if !p.expect("{") {
		return nil
	}
	var ms []Matcher
	for p.err == nil && !p.isOp("}") {
		ms = append(ms, p.matcher())
		if !p.isOp(",") {
			break
		}
		p.next()
	}
	p.expect("}")
	if p.err == nil && len(ms) == 0 {
		p.fail(open.pos, "a stream selector needs at least one matcher, such as {service_name=\"api\"}")
	}
	return ms
}

func (p *parser) matcher() Matcher {
	m := Matcher{Name: p.ident("a label name")}
	t := p.peek()
	switch {
	case t.kind == tOp && (t.text == "=" || t.text == "!=" || t.text == "=~" || t.text == "!~"):
		m.Op = MatchOp(p.next().text)
	default:
		p.fail(t.pos, "unexpected %s, expected one of =, !=, =~, !~", t)
		return m
	}
	vt := p.peek()
	m.Value = p.str("a quoted value")
	if p.err == nil && (m.Op == "=~" || m.Op == "!~") {
		p.checkRegexp(vt.pos, m.Value)
	}
	return m
}

// checkRegexp fails at pos if re does not compile (as a matcher's or a
// line filter's whole-value expression), as Loki's parser refuses it.
func (p *parser) checkRegexp(pos int, re string) {
	if _, err := regexp.Compile("^(?:" + re + ")$"); err != nil {
		p.fail(pos, "invalid regular expression %q: %v", re, err)
	}
}

// pipelineStage parses one stage if one starts here: ok false if not.
func (p *parser) pipelineStage() (Stage, bool) {
	t := p.peek()
	if t.kind != tOp {
		return nil, false
	}
	switch t.text {
	case "|=", "!=", "|~", "!~", "|>", "!>":
		if p.peekAt(1).kind != tString {
			return nil, false // a comparison of a binary operation
		}
		p.next()
		vt := p.peek()
		f := &LineFilter{Op: LineFilterOp(t.text), Values: []string{p.str("a quoted string")}}
		regex := t.text == "|~" || t.text == "!~"
		if regex && p.err == nil {
			p.checkRegexp(vt.pos, f.Values[0])
		}
		for p.isIdent("or") && p.peekAt(1).kind == tString {
			p.next()
			if regex && p.err == nil {
				p.checkRegexp(p.peek().pos, p.peek().text)
			}
			f.Values = append(f.Values, p.next().text)
		}
		return f, true
	case "|":
		if p.peekAt(1).kind == tIdent && p.peekAt(1).text == "unwrap" {
			return nil, false // for logRange
		}
		p.next()
		return p.stage(t.pos), true
	}
	return nil, false
}

// stage parses what follows a "|".
func (p *parser) stage(pos int) Stage {
	t := p.peek()
	if t.kind == tOp && t.text == "(" {
		return &LabelFilter{Pred: p.labelPred()}
	}
	if t.kind != tIdent {
		p.fail(t.pos, "unexpected %s after |, expected a parser, a label filter or a formatter", t)
		return nil
	}
	next := p.peekAt(1)
	if next.kind == tOp && slices.Contains(compareOps, next.text) {
		return &LabelFilter{Pred: p.labelPred()}
	}
	p.next()
	switch t.text {
	case "json", "logfmt":
		ps := &Parser{Kind: ParserKind(t.text)}
		for t.text == "logfmt" && p.isOp("-") && p.peekAt(1).kind == tOp && p.peekAt(1).text == "-" {
			p.next()
			p.next()
			flag := p.ident("a logfmt flag")
			if flag != "strict" && flag != "keep_empty" && !(flag == "keep" && p.isOp("-")) {
				p.fail(p.peek().pos, "unknown logfmt flag --%s: --strict or --keep-empty", flag)
				return nil
			}
			if flag == "keep" { // --keep-empty lexes as keep - empty
				p.next()
				if p.ident("empty") != "empty" {
					return nil
				}
				flag = "keep-empty"
			}
			ps.Flags = append(ps.Flags, "--"+flag)
		}
		for p.err == nil && p.peek().kind == tIdent && !p.isIdent("or") && !p.isIdent("and") {
			e := LabelExtraction{Label: p.next().text}
			e.Path = e.Label
			if p.isOp("=") {
				p.next()
				e.Path = p.str("a quoted field path")
			}
			ps.Params = append(ps.Params, e)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
		return ps
	case "regexp", "pattern":
		return &Parser{Kind: ParserKind(t.text), Expr: p.str("a quoted expression")}
	case "unpack":
		return &Parser{Kind: ParseUnpack}
	case "line_format":
		return &LineFormat{Template: p.str("a quoted template")}
	case "label_format":
		f := &LabelFormat{}
		for p.err == nil {
			o := LabelFormatOp{Dst: p.ident("a label name")}
			p.expect("=")
			if p.peek().kind == tIdent {
				o.Src, o.Rename = p.next().text, true
			} else {
				o.Template = p.str("a label name or a quoted template")
			}
			f.Ops = append(f.Ops, o)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
		return f
	case "drop", "keep":
		d := &DropKeep{Keep: t.text == "keep"}
		for p.err == nil {
			m := Matcher{Name: p.ident("a label name")}
			if tt := p.peek(); tt.kind == tOp && (tt.text == "=" || tt.text == "!=" || tt.text == "=~" || tt.text == "!~") && p.peekAt(1).kind == tString {
				m.Op = MatchOp(p.next().text)
				m.Value = p.next().text
			}
			d.Labels = append(d.Labels, m)
			if !p.isOp(",") {
				break
			}
			p.next()
		}
		return d
	case "decolorize":
		return &Decolorize{}
	}
	p.fail(t.pos, "unknown stage %q after |: json, logfmt, regexp, pattern, unpack, line_format, label_format, drop, keep, decolorize, unwrap, or a label filter such as status >= 500", t.text)
	return nil
}

// labelPred parses a label filter expression: comparisons joined by
// "and" (or ","), "or", and parentheses; "and" binds tighter.
func (p *parser) labelPred() LabelPred {
	l := p.labelAnd()
	for p.err == nil && p.isIdent("or") && p.startsComparison(1) {
		p.next()
		l = &LabelOr{L: l, R: p.labelAnd()}
	}
	return l
}

func (p *parser) labelAnd() LabelPred {
	l := p.labelAtom()
	for p.err == nil {
		switch {
		case p.isIdent("and") && p.startsComparison(1):
			p.next()
		case p.isOp(",") && p.startsComparison(1):
			p.next()
		default:
			return l
		}
		l = &LabelAnd{L: l, R: p.labelAtom()}
	}
	return l
}

// startsComparison reports whether the token n ahead starts a label
// comparison or a parenthesised predicate.
func (p *parser) startsComparison(n int) bool {
	t := p.peekAt(n)
	if t.kind == tOp && t.text == "(" {
		return true
	}
	next := p.peekAt(n + 1)
	return t.kind == tIdent && next.kind == tOp && slices.Contains(compareOps, next.text)
}

// compareOps are the label filters' operators.
var compareOps = []string{"=", "!=", "=~", "!~", "==", ">", ">=", "<", "<="}

func (p *parser) labelAtom() LabelPred {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > maxDepth {
		p.fail(p.peek().pos, "label filter nested more than %d deep", maxDepth)
		return nil
	}
	if p.isOp("(") {
		p.next()
		e := p.labelPred()
		p.expect(")")
		return e
	}
	c := &LabelCompare{Label: p.ident("a label name")}
	opTok := p.peek()
	if opTok.kind != tOp || !slices.Contains(compareOps, opTok.text) {
		p.fail(opTok.pos, "unexpected %s, expected a comparison operator", opTok)
		return c
	}
	p.next()
	c.Op = opTok.text
	neg := false
	if p.isOp("-") {
		p.next()
		neg = true
	}
	v := p.peek()
	switch {
	case v.kind == tString && !neg:
		if c.Op != "=" && c.Op != "!=" && c.Op != "=~" && c.Op != "!~" {
			p.fail(opTok.pos, "%s compares numbers, durations or bytes, not the string %s", c.Op, v)
			return c
		}
		c.Kind, c.Str = ValueString, p.next().text
	case v.kind == tNumber, v.kind == tDuration, v.kind == tBytes:
		if c.Op == "=~" || c.Op == "!~" {
			p.fail(opTok.pos, "%s matches a quoted regular expression, not %s", c.Op, v)
			return c
		}
		if c.Op == "=" {
			c.Op = "=="
		}
		p.next()
		c.Text = v.text
		switch v.kind {
		case tNumber:
			n, err := parseNumber(v.text)
			if err != nil {
				p.fail(v.pos, "%v", err)
			}
			c.Kind, c.Num = ValueNumber, n
		case tDuration:
			d, err := ParseDuration(v.text)
			if err != nil {
				p.fail(v.pos, "%v", err)
			}
			c.Kind, c.Num = ValueDuration, d.Seconds()
		case tBytes:
			b, err := ParseBytes(v.text)
			if err != nil {
				p.fail(v.pos, "%v", err)
			}
			c.Kind, c.Num = ValueBytes, float64(b)
		}
		if neg {
			c.Num, c.Text = -c.Num, "-"+c.Text
		}
	default:
		p.fail(v.pos, "unexpected %s, expected a quoted string, a number, a duration or a byte size", v)
	}
	return c
}
