package metricstore

import (
	"context"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
)

// Series limits per tenant (Config.SeriesLimit): a sample that would
// create a series in the head refuses its point (ReasonSeriesLimit) once
// the tenant's head holds that many, as Mimir's max_global_series_per_user
// refuses new series and keeps appending to the existing ones; a sample
// of Appendable's appenders (remote write; the rules' recording and
// ALERTS series, which Mimir's ruler limits too) that would is refused
// with a SeriesLimitError, its series' only when internal/promwrite takes
// a remote write request. The head's
// series of each tenant are counted from its index (the postings of
// TenantLabel) at most once per seriesRecount and after each head
// truncation, and counted up by each series admitted in between; a
// series admitted by a request that was rolled back counts until the
// next count.

// seriesRecount is how often the per-tenant series counts are taken from
// the head again, at most.
const seriesRecount = time.Minute

// seriesCounts are the head's series by tenant.
type seriesCounts struct {
	mu    sync.Mutex
	n     map[string]int
	epoch uint64    // the cache epoch they were counted in
	at    time.Time // when
}

// admit reports whether tenant, with limit series, may have one more in
// the head of db, and counts it if so.
func (c *seriesCounts) admit(db *tsdb.DB, epoch uint64, tenant string, limit int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now := time.Now(); c.n == nil || c.epoch != epoch || now.Sub(c.at) > seriesRecount {
		c.n, c.epoch, c.at = countSeries(db), epoch, now
	}
	if c.n[tenant] >= limit {
		return false
	}
	c.n[tenant]++
	return true
}

// countSeries counts the head's series by tenant ("" the default).
func countSeries(db *tsdb.DB) map[string]int {
	h := db.Head()
	n := map[string]int{"": int(h.NumSeries())}
	ir, err := h.Index()
	if err != nil {
		return n
	}
	defer ir.Close()
	ctx := context.Background()
	tenants, err := ir.SortedLabelValues(ctx, TenantLabel, nil)
	if err != nil {
		return n
	}
	for _, t := range tenants {
		p, err := ir.Postings(ctx, TenantLabel, t)
		if err != nil {
			continue
		}
		k := 0
		for p.Next() {
			k++
		}
		n[t] = k
		n[""] -= k
	}
	return n
}

// admitSeries reports whether the current request may append to series
// ls, which its entry has no reference to: yes when the head has it, or
// when the tenant is under its series limit (then counted).
func (a *appendState) admitSeries(ls labels.Labels) bool {
	if g, ok := a.app.(storage.GetRef); ok {
		if ref, _ := g.GetRef(ls, ls.Hash()); ref != 0 {
			return true
		}
	} else if a.head.refOf(a.ctx, ls, a.s.ledger.gen.Load) != 0 {
		return true
	}
	return a.s.series.admit(a.db, a.epoch, a.tenant, a.seriesLimit)
}
