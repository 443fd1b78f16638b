package lokiapi

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/logpattern"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// patterns answers /patterns: the patterns of the lines a log query
// selects over the range (internal/logpattern's miner: the lines' words
// with <_> for the parts that vary), each with its number of lines a
// step (step, else the range in about 250 steps, at least a second),
// the most frequent first: {"status": "success", "data": [{"pattern",
// "samples": [[unix seconds, count], ...]}]}. Patterns past the miner's
// 1,000 are not answered (their lines not counted); the patterns and
// counts are charged to the query's ticket (past it, the query's limit
// error).
func (h *Handler) patterns(r *http.Request) (any, error) {
	q := Query{Tenant: tenant.FromContext(r.Context())}
	text := r.FormValue("query")
	if text == "" {
		return nil, fmt.Errorf("%w: the query parameter is missing", errBad)
	}
	var err error
	if q.Expr, err = logql.Parse(text); err != nil {
		return nil, err
	}
	if _, ok := q.Expr.(*logql.LogQuery); !ok {
		return nil, fmt.Errorf("%w: patterns take a log query, not %s", errBad, text)
	}
	if q.Start, q.End, err = h.rangeParams(r); err != nil {
		return nil, err
	}
	step := max(time.Duration(q.End.Sub(q.Start).Seconds()/250)*time.Second, time.Second)
	if s := r.FormValue("step"); s != "" {
		if step, err = parseStep(s); err != nil {
			return nil, err
		}
		if step <= 0 {
			return nil, fmt.Errorf("%w: the step must be positive", errBad)
		}
	}
	if n := int64(q.End.Sub(q.Start)/step) + 1; n > int64(h.cfg.MaxPoints) {
		return nil, fmt.Errorf("%w: %d steps, more than %d: raise the step", errBad, n, h.cfg.MaxPoints)
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.Timeout)
	defer cancel()
	m := logpattern.New(logpattern.DefaultConfig())
	counts := map[*logpattern.Pattern]map[int64]int64{} // by step start, Unix seconds
	start := q.Start.UnixNano()
	// What the patterns and their counts hold is charged to the query's
	// ticket (a pattern's words and a count a step, roughly).
	tk := querybudget.FromContext(r.Context())
	var charged int64
	defer func() { tk.Release(charged) }()
	var chargeErr error
	charge := func(n int64) bool {
		if chargeErr = tk.Charge(n); chargeErr == nil {
			charged += n
		}
		return chargeErr == nil
	}
	if _, err := h.eng.Lines(ctx, q, func(ts int64, line []byte) bool {
		p := m.Add(line)
		if p == nil {
			return true
		}
		c := counts[p]
		if c == nil {
			if !charge(int64(256 + len(p.String()))) {
				return false
			}
			c = map[int64]int64{}
			counts[p] = c
		}
		k := (ts - start) / int64(step)
		if ts < start {
			k--
		}
		t := (start + k*int64(step)) / 1e9
		if _, ok := c[t]; !ok && !charge(48) {
			return false
		}
		c[t]++
		return true
	}); err != nil {
		return nil, err
	}
	if chargeErr != nil {
		return nil, chargeErr
	}
	// Patterns that came to read alike are one.
	byText := map[string]map[int64]int64{}
	totals := map[string]int64{}
	for p, c := range counts {
		s := p.String()
		if byText[s] == nil {
			byText[s] = map[int64]int64{}
		}
		for t, n := range c {
			byText[s][t] += n
			totals[s] += n
		}
	}
	names := slices.Collect(maps.Keys(byText))
	slices.SortFunc(names, func(a, b string) int { return cmp.Or(cmp.Compare(totals[b], totals[a]), strings.Compare(a, b)) })
	out := make([]map[string]any, 0, len(names))
	for _, s := range names {
		samples := make([][2]int64, 0, len(byText[s]))
		for _, t := range slices.Sorted(maps.Keys(byText[s])) {
			samples = append(samples, [2]int64{t, byText[s][t]})
		}
		out = append(out, map[string]any{"pattern": s, "samples": samples})
	}
	return success(out), nil
}
