package eval

import (
	"bytes"
	"fmt"
	"strconv"
	"text/template"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Label stages: label filters (| status >= 500, | level="error" or
// duration > 1s), | label_format, | drop and | keep.

// compileLabelFilter compiles a label filter stage.
func compileLabelFilter(s *logql.LabelFilter) (stage, error) {
	pred, err := compilePred(s.Pred)
	if err != nil {
		return nil, err
	}
	return pred, nil
}

// compilePred compiles a label filter's predicate. A value that does not
// convert to the filter's type keeps the line with __error__ set, as in
// Loki, so that | __error__="" drops it.
func compilePred(p logql.LabelPred) (stage, error) {
	switch p := p.(type) {
	case *logql.LabelAnd:
		l, err := compilePred(p.L)
		if err != nil {
			return nil, err
		}
		r, err := compilePred(p.R)
		if err != nil {
			return nil, err
		}
		return func(e *entry) bool { return l(e) && r(e) }, nil
	case *logql.LabelOr:
		l, err := compilePred(p.L)
		if err != nil {
			return nil, err
		}
		r, err := compilePred(p.R)
		if err != nil {
			return nil, err
		}
		return func(e *entry) bool { return l(e) || r(e) }, nil
	case *logql.LabelCompare:
		if p.Kind == logql.ValueString {
			test, err := matcherTest(logql.Matcher{Name: p.Label, Op: logql.MatchOp(p.Op), Value: p.Str})
			if err != nil {
				return nil, err
			}
			return func(e *entry) bool { return test(e.labels[p.Label]) }, nil
		}
		cmpf := numericCompare(p.Op)
		return func(e *entry) bool {
			v, ok := e.labels[p.Label]
			if !ok {
				return false
			}
			x, err := convert(p.Kind, v)
			if err != nil {
				e.set("__error__", "LabelFilterErr")
				e.set("__error_details__", err.Error())
				return true
			}
			return cmpf(x, p.Num)
		}, nil
	}
	return nil, fmt.Errorf("unsupported label filter %s", p)
}

// numericCompare is the comparison of op; <= for any other.
func numericCompare(op string) func(a, b float64) bool {
	switch op {
	case "==":
		return func(a, b float64) bool { return a == b }
	case "!=":
		return func(a, b float64) bool { return a != b }
	case ">":
		return func(a, b float64) bool { return a > b }
	case ">=":
		return func(a, b float64) bool { return a >= b }
	case "<":
		return func(a, b float64) bool { return a < b }
	}
	return func(a, b float64) bool { return a <= b }
}

// convert reads a label's value as a number, a duration (seconds) or a
// byte size.
func convert(k logql.ValueKind, v string) (float64, error) {
	switch k {
	case logql.ValueDuration:
		d, err := logql.ParseDuration(v)
		return d.Seconds(), err
	case logql.ValueBytes:
		b, err := logql.ParseBytes(v)
		return float64(b), err
	}
	return strconv.ParseFloat(v, 64)
}

// compileLabelFormat compiles | label_format dst=src (a rename) and
// dst="{{template}}" (template.go), applied in order.
func compileLabelFormat(s *logql.LabelFormat) (stage, error) {
	type op struct {
		dst, src string
		tmpl     *template.Template
	}
	var ops []op
	for _, o := range s.Ops {
		if o.Rename {
			ops = append(ops, op{dst: o.Dst, src: o.Src})
			continue
		}
		t, err := template.New("label_format").Funcs(templateFuncs).Option("missingkey=zero").Parse(o.Template)
		if err != nil {
			return nil, fmt.Errorf("label_format %s: %w", o.Dst, err)
		}
		ops = append(ops, op{dst: o.Dst, tmpl: t})
	}
	return func(e *entry) bool {
		data := templateData(e)
		for _, o := range ops {
			if o.tmpl == nil {
				v := e.labels[o.src]
				e.del(o.src)
				e.set(o.dst, v)
				continue
			}
			var b bytes.Buffer
			if err := o.tmpl.Execute(&b, data); err != nil {
				e.set("__error__", "TemplateFormatErr")
				continue
			}
			e.set(o.dst, b.String())
		}
		return true
	}, nil
}

// compileDropKeep compiles | drop and | keep: of names, or of matchers
// (drop level="debug" drops the label where it has that value).
func compileDropKeep(s *logql.DropKeep) (stage, error) {
	type m struct {
		name string
		test func(string) bool
	}
	var ms []m
	for _, l := range s.Labels {
		test, err := matcherTest(l)
		if err != nil {
			return nil, err
		}
		ms = append(ms, m{l.Name, test})
	}
	return func(e *entry) bool {
		if s.Keep {
			for name, v := range e.labels {
				keep := false
				for _, x := range ms {
					if x.name == name && (x.test == nil || x.test(v)) {
						keep = true
					}
				}
				if !keep {
					e.del(name)
				}
			}
			return true
		}
		for _, x := range ms {
			if v, ok := e.labels[x.name]; ok && (x.test == nil || x.test(v)) {
				e.del(x.name)
			}
		}
		return true
	}, nil
}
