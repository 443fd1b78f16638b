package receiver

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// shareLimits gives tenant a a quarter of the in-flight budget.
type shareLimits struct{}

func (shareLimits) Admit(string, otlpwire.Signal, int, int) error { return nil }
func (shareLimits) InflightShare(tenant string) float64 {
	if tenant == "a" {
		return 0.25
	}
	return 0
}

// bigLogs is a logs request of about n bytes.
func bigLogs(t *testing.T, n int) []byte {
	ld := plog.NewLogs()
	ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty().LogRecords().AppendEmpty().Body().SetStr(strings.Repeat("x", n))
	b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestTenantInflightShare: tenant a's requests may hold a quarter of the
// in-flight budget: with two of its requests held by the sink, a third
// is refused as overloaded (429, the share named), one larger than the
// share as too large (413), while the default tenant's request is taken.
func TestTenantInflightShare(t *testing.T) {
	r, _, _ := startAuth(t) // for the tokens file
	_ = r
	release := make(chan struct{})
	var holding atomic.Bool
	holding.Store(true)
	var held sync.WaitGroup
	rec := &recorder{hook: func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		if req.Tenant == "a" && holding.Load() {
			held.Done()
			<-release
		}
		return pipeline.Outcome{}, nil
	}}
	cfg := testConfig()
	cfg.Authenticator = r.auth
	cfg.TenantLimits = shareLimits{}
	cfg.MaxInflightBytes, cfg.MaxGRPCMessageBytes = 1<<20, 1<<20 // a's share: 256 KiB
	cfg.MaxRequestBytes, cfg.MaxDecompressedBytes = 1<<20, 1<<20
	rs := startWith(t, cfg, pipeline.Sinks{Logs: []pipeline.Sink{rec}})
	url := httpURL(rs, otlpwire.SignalLogs)
	auth := func(tok string) []string {
		return []string{"Content-Type", "application/x-protobuf", "Authorization", "Bearer " + tok}
	}
	var wg sync.WaitGroup
	for range 2 {
		held.Add(1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, _, _, err := tryPost(url, bigLogs(t, 100<<10), auth(tokenA)...); err != nil || code != http.StatusOK {
				t.Errorf("a's held request: %d %v", code, err)
			}
		}()
	}
	held.Wait()
	stop := sync.OnceFunc(func() {
		holding.Store(false)
		close(release)
		wg.Wait()
	})
	defer stop() // whatever fails below
	code, h, body := post(t, url, bigLogs(t, 100<<10), auth(tokenA)...)
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" || !strings.Contains(string(body), "share") {
		t.Errorf("a past its share: %d %q %q", code, h.Get("Retry-After"), body)
	}
	// Gzipped, so that the server reads it whole before it refuses it
	// (a plain one is refused from its Content-Length, while the client
	// still writes it).
	if code, _, body := post(t, url, gzipped(t, bigLogs(t, 300<<10)), append(auth(tokenA), "Content-Encoding", "gzip")...); code != http.StatusRequestEntityTooLarge {
		t.Errorf("a's request larger than its share: %d %q", code, body)
	}
	if code, _, body := post(t, url, bigLogs(t, 100<<10), auth(tokenD)...); code != http.StatusOK {
		t.Errorf("the default tenant while a holds its share: %d %q", code, body)
	}
	stop()
	// Given back: a's next request is taken.
	if code, _, body := post(t, url, bigLogs(t, 100<<10), auth(tokenA)...); code != http.StatusOK {
		t.Errorf("a after its requests ended: %d %q", code, body)
	}
}
