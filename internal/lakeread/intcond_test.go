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
					if c.test()(lo) != c.holds(lo) || c.test()(hi) != c.holds(hi) {
						t.Errorf("%s %d: test and holds differ at %d or %d", op, v, lo, hi)
					}
					if got := c.mayHold(lo, hi); got != some {
						t.Errorf("%s %d over [%d, %d]: mayHold %v, a value holds %v", op, v, lo, hi, got, some)
					}
				}
			}
		}
	}
}
