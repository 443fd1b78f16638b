package main

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"

	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
)

// TestServeTenantRetention: with tenant a's lake and metrics retention
// an hour and b's thirty days (overrides file), logs and metric samples
// of both from three hours ago and from now: after a restart (the lake's
// retention and the metric store's run at start) a's old hour partition
// and old samples are gone, its recent ones kept, and all of b's kept;
// on local disk and in SeaweedFS.
func TestServeTenantRetention(t *testing.T) {
	t.Parallel() // mostly waiting (restarts, SeaweedFS): beside the other waiting tests
	for _, store := range []string{"local", "s3"} {
		t.Run(store, func(t *testing.T) { testTenantRetention(t, store) })
	}
}

func testTenantRetention(t *testing.T, store string) {
	const (
		tokA = "tenant-a-token-0123456789"
		tokB = "tenant-b-token-0123456789"
	)
	dir := t.TempDir()
	tokens := writeTokens(t, filepath.Join(dir, "tokens"), tokA+" a\n"+tokB+" b\n")
	limits := writeTokens(t, filepath.Join(dir, "overrides.yaml"), `overrides:
  a: {lake_retention: 1h, metrics_retention: 1h}
  b: {lake_retention: 30d, metrics_retention: 30d}
`)
	data := filepath.Join(dir, "data")
	args := []string{"--otlp-bearer-tokens-file", tokens, "--admin-bearer-tokens-file", tokens,
		"--limits-overrides-file", limits, "--lake-max-delay", "200ms"}
	var (
		env []string
		srv *s3test.Server
		bkt string
	)
	// hours lists the hour partitions of the lake's logs, as
	// "tenant=t/date=d/hour=h".
	hourRE := regexp.MustCompile(`logs/(tenant=[^/]+/date=[^/]+/hour=\d\d)/[^/]+\.parquet$`)
	hours := func() []string {
		var names []string
		if store == "local" {
			filepath.WalkDir(filepath.Join(data, "lake"), func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					names = append(names, filepath.ToSlash(p))
				}
				return nil
			})
		}
		if srv != nil {
			names = s3Keys(t, srv, bkt)
		}
		var out []string
		for _, n := range names {
			if m := hourRE.FindStringSubmatch(n); m != nil && !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	if store == "s3" {
		srv = s3test.Start(t)
		bkt = srv.CreateBucket("lake")
		env = srv.Environ()
		args = append(args, "--lake-url", "s3://"+bkt+"/wh", "--lake-s3-endpoint", srv.Endpoint, "--lake-s3-path-style")
	}
	p := startServeProcEnv(t, env, data, args...)
	t.Cleanup(func() { p.cmd.Process.Kill() })

	now := time.Now()
	old := now.Add(-3 * time.Hour)
	post := func(token, path string, body []byte) {
		if code, _, b := postOTLPAs(t, p.addrs["OTLP/HTTP"], path, token, body); code != http.StatusOK || len(b) > 0 {
			t.Fatalf("%s: HTTP %d %q", path, code, b)
		}
	}
	logsAt := func(at time.Time) []byte {
		ld := plog.NewLogs()
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		for range 10 {
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(pcommon.NewTimestampFromTime(at))
			lr.Body().SetStr("kept or not")
		}
		b, _ := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		return b
	}
	gaugeAt := func(at time.Time) []byte {
		md := pmetric.NewMetrics()
		m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
		m.SetName("kept")
		dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(at))
		dp.SetDoubleValue(1)
		b, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
		return b
	}
	// Every tenant's old samples before the recent ones: the head takes
	// samples at most an hour older than its newest.
	for _, at := range []time.Time{old, now} {
		for _, tok := range []string{tokA, tokB} {
			post(tok, "/v1/logs", logsAt(at))
			post(tok, "/v1/metrics", gaugeAt(at))
		}
	}
	hourOf := func(tenant string, at time.Time) string {
		return "tenant=" + tenant + "/date=" + at.UTC().Format("2006-01-02") + "/hour=" + at.UTC().Format("15")
	}
	samples := func(token string) float64 {
		return promQueryAuth(t, p.addrs["admin HTTP"], `sum(count_over_time(kept[4h]))`, "", token)[""]
	}
	if a, b := samples(tokA), samples(tokB); a != 2 || b != 2 {
		t.Fatalf("before: a %v samples, b %v; want 2 each (the metric store's retention removed %v?)", a, b, p.stderr)
	}
	p.stop(t)
	want := []string{hourOf("a", old), hourOf("a", now), hourOf("b", old), hourOf("b", now)}
	slices.Sort(want)
	if got := hours(); !slices.Equal(got, want) {
		t.Fatalf("lake before the restart: %v, want %v", got, want)
	}

	p = startServeProcEnv(t, env, data, args...)
	want = slices.DeleteFunc(want, func(h string) bool { return h == hourOf("a", old) })
	deadline := time.Now().Add(20 * time.Second)
	for got := hours(); !slices.Equal(got, want); got = hours() {
		if time.Now().After(deadline) {
			t.Fatalf("lake after the restart: %v, want %v\n%s", got, want, p.stderr)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for deadline := time.Now().Add(20 * time.Second); samples(tokA) != 1; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("a's old sample still there:\n%s", p.stderr)
		}
	}
	if b := samples(tokB); b != 2 {
		t.Errorf("b: %v samples after a's retention, want 2", b)
	}
	p.stop(t)
	if !strings.Contains(p.stderr.String(), "past their retention removed") {
		t.Errorf("no retention logged:\n%s", p.stderr)
	}
}
