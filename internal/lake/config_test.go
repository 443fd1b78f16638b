package lake

import (
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// TestWriterConfigValidate: every setting NewWriter refuses is refused by
// Validate, in an error that names the field; the defaults with a Dir, or
// with a Bucket, are valid.
func TestWriterConfigValidate(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(t.TempDir())
	for _, tc := range []struct {
		field string
		mod   func(*WriterConfig)
	}{
		{"Dir", func(c *WriterConfig) { c.Dir = "" }},
		{"Dir and Bucket", func(c *WriterConfig) { c.Bucket = b }},
		{"ScratchDir", func(c *WriterConfig) { c.ScratchDir = dir }},
		{"FileSize", func(c *WriterConfig) { c.FileSize = 1<<10 - 1 }},
		{"MaxBuffer", func(c *WriterConfig) { c.MaxBuffer = 0 }},
		{"MaxAge", func(c *WriterConfig) { c.MaxAge = -time.Second }},
		{"RowGroupRows", func(c *WriterConfig) { c.RowGroupRows = 0 }},
		{"MaxAttributeColumns", func(c *WriterConfig) { c.MaxAttributeColumns = 0 }},
		{"MaxAttributeColumns", func(c *WriterConfig) { c.MaxAttributeColumns = 30001 }},
	} {
		c := DefaultWriterConfig()
		c.Dir = dir
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: Validate = %v, want an error naming it", tc.field, err)
		}
		if _, err := NewWriter(c); err == nil {
			t.Errorf("%s: NewWriter accepted it", tc.field)
		}
	}
	c := DefaultWriterConfig()
	c.Dir = dir
	if err := c.Validate(); err != nil {
		t.Errorf("defaults with a Dir: %v", err)
	}
	c.Dir, c.Bucket = "", b
	if err := c.Validate(); err != nil {
		t.Errorf("defaults with a Bucket: %v", err)
	}
	if err := (WriterConfig{Dir: dir}).Validate(); err == nil {
		t.Error("a WriterConfig not from DefaultWriterConfig is valid")
	}
}
