package promapi

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/prometheus/tsdb"
)

// TestConfigValidate: every setting New refuses is refused by Validate,
// in an error that names the field; the defaults are valid.
func TestConfigValidate(t *testing.T) {
	var db *tsdb.DB // a non-nil AdminDB holding a nil *tsdb.DB; never called
	for _, tc := range []struct {
		field string
		mod   func(*Config)
	}{
		{"Timeout", func(c *Config) { c.Timeout = 0 }},
		{"MaxSamples", func(c *Config) { c.MaxSamples = -1 }},
		{"LookbackDelta", func(c *Config) { c.LookbackDelta = -time.Minute }},
		{"Gatherer", func(c *Config) { c.Head = headStats{} }},
		{"Head", func(c *Config) { c.Gatherer = prometheus.NewRegistry() }},
		{"SnapshotDir", func(c *Config) { c.Admin = db }},
		{"Admin", func(c *Config) { c.SnapshotDir = t.TempDir() }},
	} {
		c := DefaultConfig()
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate = %v, want an error naming it", tc.field, err)
		}
		if _, err := New(c, nil); err == nil {
			t.Errorf("%s: New accepted it", tc.field)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("defaults invalid: %v", err)
	}
}
