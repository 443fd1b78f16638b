package eval

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Query is a LogQL query to evaluate.
type Query struct {
	Expr       logql.Expr
	Tenant     string
	Start, End time.Time // a range query's; an instant query's: both its time
	Step       time.Duration
	Instant    bool
	Limit      int  // lines of a log query
	Forward    bool // oldest lines first (else newest first)
	// Categorize groups a log query's lines by their stream (index)
	// labels alone, each line with its structured metadata and parsed
	// labels apart (Loki's categorize-labels encoding); else streams
	// group lines by all their labels.
	Categorize bool
}

// Entry is a log line of a stream; with Query.Categorize, its structured
// metadata and the labels its pipeline's stages set (parsed), each sorted.
type Entry struct {
	Time     int64 // ns
	Line     string
	Metadata Labels
	Parsed   Labels
}

// Stream is a label set and its lines.
type Stream struct {
	Labels  Labels
	Entries []Entry
}

// Point is a sample: time in ms since the epoch.
type Point struct {
	T int64
	V float64
}

// Series is a label set and its samples.
type Series struct {
	Labels Labels
	Points []Point
}

// Result is what a query gives: streams (a log query), a matrix (a
// range query's metric), a vector (an instant one's), or a scalar.
type Result struct {
	Type    string // "streams", "matrix", "vector", "scalar"
	Streams []Stream
	Series  []Series
	Scalar  Point
	Stats   Stats
}

// Stats are what a query read.
type Stats struct {
	Lines    int64 // log records read
	Bytes    int64 // of their lines
	Returned int64 // lines or samples returned
}

// ErrLimit wraps the errors of queries past a limit (of the series or
// the steps of a metric query; lokiapi adds its own of lines).
var ErrLimit = errors.New("query past a limit")

// Config configures an Engine.
type Config struct {
	// Source is what queries read. It must be set.
	Source Source
	// MaxSeries bounds the series of a metric query's steps (past it a
	// query fails with ErrLimit). lokiapi's default: 10,000.
	MaxSeries int
	// MaxPoints bounds the steps of a range query. lokiapi's default:
	// 11,000 (as Loki and Prometheus).
	MaxPoints int
	// Budget returns the memory budget of the query whose context is
	// ctx (serve: querybudget.FromContext). Nil: no budget.
	Budget func(ctx context.Context) Budget
}

// Engine evaluates LogQL over a Source. It holds no state of its own
// between queries: Exec may run in several goroutines at once.
type Engine struct {
	src       Source
	maxSeries int
	maxPoints int
	budget    func(context.Context) Budget
}

// NewEngine returns an engine of cfg.
func NewEngine(cfg Config) *Engine {
	return &Engine{src: cfg.Source, maxSeries: cfg.MaxSeries, maxPoints: cfg.MaxPoints, budget: cfg.Budget}
}

// budgetOf is the budget of the query of ctx.
func (e *Engine) budgetOf(ctx context.Context) Budget {
	if e.budget == nil {
		return noBudget{}
	}
	if b := e.budget(ctx); b != nil {
		return b
	}
	return noBudget{}
}

// Exec evaluates q. Errors past a limit wrap ErrLimit, the budget's
// errors or the source's; the Result's Stats are set even then for a log
// query.
func (e *Engine) Exec(ctx context.Context, q Query) (Result, error) {
	ev := &evaluator{e: e, q: q, tk: e.budgetOf(ctx)}
	if lq, ok := q.Expr.(*logql.LogQuery); ok {
		streams, err := ev.logs(ctx, lq)
		return Result{Type: "streams", Streams: streams, Stats: ev.stats}, err
	}
	if q.Instant {
		ev.steps = []int64{q.Start.UnixNano()}
	} else {
		if q.Step <= 0 {
			return Result{}, fmt.Errorf("the step must be positive")
		}
		n := int64(q.End.Sub(q.Start)/q.Step) + 1
		if n > int64(e.maxPoints) {
			return Result{}, fmt.Errorf("%w: %d steps, more than %d: raise the step", ErrLimit, n, e.maxPoints)
		}
		for t := q.Start; !t.After(q.End); t = t.Add(q.Step) {
			ev.steps = append(ev.steps, t.UnixNano())
		}
	}
	v, err := ev.eval(ctx, q.Expr, nil)
	if err != nil {
		return Result{}, err
	}
	res := Result{Stats: ev.stats}
	if v.scalar != nil {
		if q.Instant {
			return Result{Type: "scalar", Scalar: Point{q.Start.UnixMilli(), v.scalar[0]}, Stats: ev.stats}, nil
		}
		// A scalar over a range is a series without labels.
		s := Series{}
		for i, t := range ev.steps {
			s.Points = append(s.Points, Point{t / 1e6, v.scalar[i]})
		}
		return Result{Type: "matrix", Series: []Series{s}, Stats: ev.stats}, nil
	}
	res.Type = "matrix"
	if q.Instant {
		res.Type = "vector"
	}
	for _, s := range v.series {
		out := Series{Labels: s.labels}
		for i, t := range ev.steps {
			if s.has[i] {
				out.Points = append(out.Points, Point{t / 1e6, s.vals[i]})
			}
		}
		if len(out.Points) > 0 {
			res.Series = append(res.Series, out)
		}
	}
	if q.Instant {
		if vagg, ok := q.Expr.(*logql.VectorAggregation); ok && (vagg.Op == "sort" || vagg.Op == "sort_desc") {
			slices.SortStableFunc(res.Series, func(a, b Series) int {
				c := cmp.Compare(a.Points[0].V, b.Points[0].V)
				if vagg.Op == "sort_desc" {
					return -c
				}
				return c
			})
			return res, nil
		}
	}
	slices.SortFunc(res.Series, func(a, b Series) int { return strings.Compare(a.Labels.key(), b.Labels.key()) })
	return res, nil
}

// evaluator is the state of one query's evaluation.
type evaluator struct {
	e     *Engine
	q     Query
	steps []int64 // ns
	stats Stats
	// tk is the query's ticket (querybudget), charged with what the
	// answer holds: lines, series and their steps. It is given back
	// whole when the query ends.
	tk Budget
}
