package overrides

import (
	"testing"
)

// FuzzParse: no overrides file makes parse panic, and every file it
// takes holds only valid limits, the default tenant's under "".
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"defaults:\n  logs: {records_per_second: 100, bytes_per_second: 1MiB}\n  inflight_share: 0.5\n",
		"overrides:\n  a:\n    logs: {records_per_second: 10}\n    traces: {records_per_second: 7, records_burst: 70}\n  default:\n    inflight_share: 0.25\n",
		"overrides: {a: {metrics: {records_per_second: 1, records_burst: 1, bytes_burst: 10KB}}}\n",
		"defaults: {logz: {}}",
		"overrides: {a: &x {logs: {records_per_second: 1}}, b: *x}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		tb, err := parse(b, "default")
		if err != nil {
			return
		}
		for name, l := range tb.tenants {
			if err := l.validate(name); err != nil {
				t.Fatalf("%q: %v", name, err)
			}
			if name == "default" {
				t.Fatal("the default tenant kept its name")
			}
		}
	})
}
