package spoolsink

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/internal/spool"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func logs(records int) []byte {
	return synth.Generate(otlpwire.SignalLogs, synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: records})
}

// TestSinkRefusals: a full spool asks the client to retry; a request the
// whole spool could never hold is refused for good.
func TestSinkRefusals(t *testing.T) {
	cfg := spool.DefaultConfig()
	cfg.Dir = filepath.Join(t.TempDir(), "spool")
	cfg.Sync, cfg.MaxBytes = spool.SyncNever, 4<<10
	sp, err := spool.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	s, err := New(sp, "default")
	if err != nil {
		t.Fatal(err)
	}
	consume := func(body []byte) error {
		_, err := s.Consume(context.Background(), &pipeline.Request{Signal: otlpwire.SignalLogs, Body: body, Records: 1})
		return err
	}
	huge := logs(200) // over 4 KiB alone
	if err := consume(huge); !errors.Is(err, pipeline.ErrTooLarge) {
		t.Errorf("a request larger than the spool: %v, want pipeline.ErrTooLarge", err)
	}
	small := logs(3)
	var full error
	for range 100 {
		if full = consume(small); full != nil {
			break
		}
	}
	if !errors.Is(full, pipeline.ErrOverloaded) {
		t.Errorf("a full spool: %v, want pipeline.ErrOverloaded", full)
	}
}
