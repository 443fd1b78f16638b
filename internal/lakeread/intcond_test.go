package lakeread

import "testing"

// TestIntCondMayHold: a row group is skipped for a condition only when no
// value in its bounds holds it (checked by trying each value).
func TestIntCondMayHold(t *testing.T) {
	for _, op := range []string{"=", "!=", ">", ">=", "<", "<="} {
		for v := int64(-2); v <= 6; v++ {
			c := IntCond{Op: op, Value: v}
			for lo := int64(0); lo <= 4; lo++ {
				for hi := lo; hi <= 4; hi++ {
					some := false
					for x := lo; x <= hi; x++ {
						some = some || c.holds(x)
					}
					for _, x := range []int64{lo, hi} {
						want := map[string]bool{"=": x == v, "!=": x != v, ">": x > v, ">=": x >= v, "<": x < v, "<=": x <= v}[op]
						if c.test()(x) != want || c.holds(x) != want {
							t.Errorf("%d %s %d: test %v, holds %v, want %v", x, op, v, c.test()(x), c.holds(x), want)
						}
					}
					if got := c.mayHold(lo, hi); got != some {
						t.Errorf("%s %d over [%d, %d]: mayHold %v, a value holds %v", op, v, lo, hi, got, some)
					}
				}
			}
		}
	}
}
