package ruler

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/promql/parser/posrange"
	"github.com/prometheus/prometheus/rules"

	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
)

// logqlExpr is a LogQL metric query as the rules package holds an
// expression: it prints itself, the text a LogQL rule's query function
// parses again, and is never walked (the LogQL managers analyse no
// dependencies between rules).
type logqlExpr struct{ query string }

func (e logqlExpr) String() string    { return e.query }
func (e logqlExpr) Pretty(int) string { return e.query }
func (e logqlExpr) PositionRange() posrange.PositionRange {
	return posrange.PositionRange{End: posrange.Pos(len(e.query))}
}
func (e logqlExpr) Type() parser.ValueType { return parser.ValueTypeVector }
func (e logqlExpr) PromQLExpr()            {}

// logqlParser is the parser of the LogQL managers: expressions are LogQL
// metric queries; the rest (label sets, selectors) PromQL's, as the rule
// format's labels are Prometheus'.
type logqlParser struct{ parser.Parser }

// ParseExpr parses a LogQL metric query; a log query (lines, not
// samples) is refused, as Loki's ruler refuses it.
func (logqlParser) ParseExpr(input string) (parser.Expr, error) {
	q := strings.TrimSpace(input)
	e, err := logql.Parse(q)
	if err != nil {
		return nil, fmt.Errorf("parse LogQL: %w", err)
	}
	if _, ok := e.(*logql.LogQuery); ok {
		return nil, fmt.Errorf("parse LogQL: %q is a log query; a rule needs a metric query (count_over_time, rate, sum by ...)", q)
	}
	return logqlExpr{q}, nil
}

// noDependencies is the LogQL managers' RuleDependencyController: their
// expressions are not PromQL, so no rule is known to be independent and
// each group's rules run in order.
type noDependencies struct{}

func (noDependencies) AnalyseRules([]rules.Rule) {}

// logqlQueryFunc evaluates a LogQL rule's query for tenant t at ts: an
// instant query of e, each sample of its vector (or its scalar) a
// sample of the result, as rules.EngineQueryFunc makes of PromQL's.
func logqlQueryFunc(e *eval.Engine, t string) rules.QueryFunc {
	return func(ctx context.Context, qs string, ts time.Time) (promql.Vector, error) {
		expr, err := logql.Parse(qs)
		if err != nil {
			return nil, fmt.Errorf("parse LogQL: %w", err)
		}
		res, err := e.Exec(ctx, eval.Query{Expr: expr, Tenant: t, Start: ts, End: ts, Instant: true})
		if err != nil {
			return nil, err
		}
		switch res.Type {
		case "scalar":
			return promql.Vector{{T: res.Scalar.T, F: res.Scalar.V, Metric: labels.EmptyLabels()}}, nil
		case "vector":
			v := make(promql.Vector, 0, len(res.Series))
			b := labels.NewScratchBuilder(0)
			for _, s := range res.Series {
				b.Reset()
				for _, l := range s.Labels {
					b.Add(l.Name, l.Value)
				}
				b.Sort()
				p := s.Points[len(s.Points)-1]
				v = append(v, promql.Sample{T: p.T, F: p.V, Metric: b.Labels()})
			}
			return v, nil
		}
		return nil, errors.New("rule result is not a vector or scalar")
	}
}
