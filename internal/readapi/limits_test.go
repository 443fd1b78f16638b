package readapi

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// TestCheckRange: a query longer than its ticket's tenant's range is a
// bad request in Loki's words; without a ticket, or a bound, any range
// goes.
func TestCheckRange(t *testing.T) {
	c := querybudget.DefaultConfig()
	c.MaxConcurrent, c.MaxConcurrentPerTenant = 4, 2
	c.PerTenant = func(tenant string) querybudget.TenantLimits {
		if tenant == "a" {
			return querybudget.TenantLimits{MaxRange: time.Hour}
		}
		return querybudget.TenantLimits{}
	}
	g, err := querybudget.New(c)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Unix(1_800_000_000, 0)
	ctxOf := func(tenant string) context.Context {
		tk, err := g.Admit(context.Background(), tenant)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(tk.Done)
		return querybudget.NewContext(context.Background(), tk)
	}
	a := ctxOf("a")
	if err := CheckRange(a, end.Add(-time.Hour), end); err != nil {
		t.Errorf("an hour: %v", err)
	}
	err = CheckRange(a, end.Add(-2*time.Hour), end)
	var e *Error
	if !errors.As(err, &e) || e.Kind != KindBadRequest || !strings.Contains(err.Error(), "query length: 2h, limit: 1h") {
		t.Errorf("two hours: %v", err)
	}
	for _, ctx := range []context.Context{ctxOf("b"), context.Background()} {
		if err := CheckRange(ctx, end.Add(-1000*time.Hour), end); err != nil {
			t.Errorf("no bound: %v", err)
		}
	}
}
