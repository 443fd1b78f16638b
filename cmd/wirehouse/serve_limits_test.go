package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/prometheus/prompb"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// TestServeTenantLimits: with an overrides file limiting tenant a's logs
// to 200 records a second, a's requests past its burst are refused, 429
// with Retry-After over OTLP/HTTP and RESOURCE_EXHAUSTED with RetryInfo
// over OTLP/gRPC, counted by tenant and reason, while tenant b, without
// a limit, sends ten times as much unrefused; the file raised at run
// time takes effect without a restart; every acknowledged record of
// each tenant is in its lake partition, and no refused one.
func TestServeTenantLimits(t *testing.T) {
	const (
		tokA = "tenant-a-token-0123456789"
		tokB = "tenant-b-token-0123456789"
	)
	dir := t.TempDir()
	tokens := writeTokens(t, filepath.Join(dir, "tokens"), tokA+" a\n"+tokB+" b\n")
	limits := filepath.Join(dir, "overrides.yaml")
	const queryLimits = "    max_query_range: 1h\n    max_active_series: 3\n  default:\n    max_query_range: 1h\n"
	writeTokens(t, limits, "overrides:\n  a:\n    logs: {records_per_second: 200}\n"+queryLimits)
	data := filepath.Join(dir, "data")
	p := startServeProc(t, data, "--otlp-bearer-tokens-file", tokens, "--limits-overrides-file", limits, "--lake-max-delay", "200ms")
	t.Cleanup(func() { p.cmd.Process.Kill() })

	next := int64(0)
	request := func() []byte {
		ld := plog.NewLogs()
		sl := ld.ResourceLogs().AppendEmpty().ScopeLogs().AppendEmpty()
		for range 100 {
			lr := sl.LogRecords().AppendEmpty()
			lr.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
			lr.Body().SetStr("limited")
			lr.Attributes().PutInt("test.id", next)
			next++
		}
		b, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	postHTTP := func(token string) (int, string) {
		code, h, _ := postOTLPAs(t, p.addrs["OTLP/HTTP"], "/v1/logs", token, request())
		return code, h.Get("Retry-After")
	}
	acked := map[string]int{}
	for range 2 { // a's burst: 200 records
		if code, _ := postHTTP(tokA); code != http.StatusOK {
			t.Fatalf("a within its burst: HTTP %d", code)
		}
		acked["a"] += 100
	}
	code, retry := postHTTP(tokA)
	if code != http.StatusTooManyRequests || retry != "1" {
		t.Errorf("a over its limit: HTTP %d, Retry-After %q; want 429 and 1", code, retry)
	}

	conn, err := grpc.NewClient(p.addrs["OTLP/gRPC"], grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+tokA)
	lr := plogotlp.NewExportRequest()
	if err := lr.UnmarshalProto(request()); err != nil {
		t.Fatal(err)
	}
	_, err = plogotlp.NewGRPCClient(conn).Export(ctx, lr)
	st := status.Convert(err)
	var info *errdetails.RetryInfo
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			info = ri
		}
	}
	if st.Code() != codes.ResourceExhausted || info == nil || info.RetryDelay.AsDuration() <= 0 {
		t.Errorf("a over its limit over gRPC: %v (RetryInfo %v); want RESOURCE_EXHAUSTED with a RetryInfo", err, info)
	}

	// b, without a limit: 2,000 records at once, none refused.
	for range 20 {
		if code, _ := postHTTP(tokB); code != http.StatusOK {
			t.Fatalf("b: HTTP %d", code)
		}
		acked["b"] += 100
	}

	// a's limit raised in the file: taken within a few seconds, no restart.
	writeTokens(t, limits, "overrides:\n  a:\n    logs: {records_per_second: 100000}\n"+queryLimits)
	deadline := time.Now().Add(5 * time.Second)
	for scrape(t, p.addrs["admin HTTP"])[`wirehouse_overrides_reloads_total{result="ok"}`] != 1 {
		// The file is looked at when a request comes, at most once a
		// second; until then a's old limit holds.
		switch code, _ := postHTTP(tokA); {
		case code == http.StatusOK:
			acked["a"] += 100
		case code != http.StatusTooManyRequests:
			t.Fatalf("a: HTTP %d", code)
		}
		if time.Now().After(deadline) {
			t.Fatal("the overrides file was not reloaded in 5 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	for range 20 { // 2,000 records at once: past the old burst tenfold
		if code, _ := postHTTP(tokA); code != http.StatusOK {
			t.Fatalf("a at its raised limit: HTTP %d", code)
		}
		acked["a"] += 100
	}

	// Query ranges: a's and the default tenant's at most an hour, b's
	// unbounded; Loki's API names the tenant by X-Scope-OrgID (no admin
	// tokens), Prometheus' serves the default tenant.
	now := time.Now()
	for _, tc := range []struct {
		path, tenant string
		want         int
	}{
		{"/loki/api/v1/query_range?query=" + url.QueryEscape(`{service_name=~".+"}`), "a", http.StatusBadRequest},
		{"/loki/api/v1/query_range?query=" + url.QueryEscape(`{service_name=~".+"}`), "b", http.StatusOK},
		{"/api/v1/query_range?step=60&query=up", "", http.StatusBadRequest},
	} {
		for _, span := range []time.Duration{2 * time.Hour, 30 * time.Minute} {
			q := fmt.Sprintf("%s&start=%d&end=%d", tc.path, now.Add(-span).Unix(), now.Unix())
			req, _ := http.NewRequest(http.MethodGet, "http://"+p.addrs["admin HTTP"]+q, nil)
			if tc.tenant != "" {
				req.Header.Set("X-Scope-OrgID", tc.tenant)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := tc.want
			if span < time.Hour {
				want = http.StatusOK
			}
			if resp.StatusCode != want || (want == http.StatusBadRequest && !strings.Contains(string(body), "query time range exceeds the limit (query length: 2h, limit: 1h)")) {
				t.Errorf("%s (tenant %q) over %v: %d %s, want %d", tc.path, tc.tenant, span, resp.StatusCode, body, want)
			}
		}
	}

	// a's metric store: 3 series at most; 5 new ones keep 3.
	md := pmetric.NewMetrics()
	g := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	g.SetName("limited")
	gauge := g.SetEmptyGauge()
	for i := range 5 {
		dp := gauge.DataPoints().AppendEmpty()
		dp.SetTimestamp(pcommon.NewTimestampFromTime(time.Now()))
		dp.Attributes().PutInt("i", int64(i))
	}
	mb, _ := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
	code, _, rb := postOTLPAs(t, p.addrs["OTLP/HTTP"], "/v1/metrics", tokA, mb)
	er := pmetricotlp.NewExportResponse()
	if err := er.UnmarshalProto(rb); err != nil || code != http.StatusOK ||
		er.PartialSuccess().RejectedDataPoints() != 2 || !strings.Contains(er.PartialSuccess().ErrorMessage(), "series_limit") {
		t.Errorf("a's 5 series past its 3: HTTP %d, %v %q", code, err, er.PartialSuccess().ErrorMessage())
	}

	m := scrape(t, p.addrs["admin HTTP"])
	if m[`wirehouse_tenant_refused_requests_total{reason="records_rate",signal="logs",tenant="a"}`] < 2 {
		t.Errorf("a's refusals not counted: %v", m)
	}
	if n := m[`wirehouse_overrides_reloads_total{result="ok"}`]; n != 1 {
		t.Errorf("%v reloads counted, want 1", n)
	}
	for k := range m {
		if strings.Contains(k, `tenant="b"`) && strings.Contains(k, "refused") {
			t.Errorf("b refused: %s %v", k, m[k])
		}
	}
	p.stop(t)
	for tenant, n := range acked {
		if got := lakeRows(t, filepath.Join(data, "lake", "logs", "tenant="+tenant)); got != n {
			t.Errorf("tenant %s: %d rows in the lake, want the %d acknowledged", tenant, got, n)
		}
	}
	if _, err := os.Stat(filepath.Join(data, "lake", "logs", "tenant=default")); err == nil {
		t.Error("records in the default tenant's partition")
	}
}

// grepLines returns the lines of s holding sub.
func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// postOTLPAs posts an OTLP protobuf body to addr's path with a bearer
// token and returns the status, headers and body of the answer.
func postOTLPAs(t *testing.T, addr, path, token string, body []byte) (int, http.Header, []byte) {
	t.Helper()
	return postWith(t, "http://"+addr+path, body, "Content-Type", "application/x-protobuf", "Authorization", "Bearer "+token)
}

// postWith posts body to url with headers (name, value, ...) and returns
// the status, headers and body of the answer.
func postWith(t *testing.T, url string, body []byte, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// TestServeSeriesLimitRemoteWrite: tenant a's max_active_series holds for
// remote write (Prometheus' 1.0 shape, the tenant its admin token's): a
// request with a sample of one of a's series and two of new series, one
// over the limit, stores the first two and answers 400 for the third,
// which senders do not retry; one that Prometheus' own handler takes
// (metadata with it) is refused whole, as that handler refuses a bad
// sample; b is not limited; each refusal is counted.
func TestServeSeriesLimitRemoteWrite(t *testing.T) {
	const (
		tokA  = "admin-a-token-0123456789"
		tokB  = "admin-b-token-0123456789"
		tokOp = "admin-operator-token-0123"
	)
	dir := t.TempDir()
	limits := writeTokens(t, filepath.Join(dir, "overrides.yaml"), "overrides:\n  a:\n    max_active_series: 3\n")
	p := startServeProc(t, filepath.Join(dir, "data"), "--limits-overrides-file", limits,
		"--admin-bearer-tokens-file", writeTokens(t, filepath.Join(dir, "admin"), tokA+" a\n"+tokB+" b\n"+tokOp+" role=operator\n"))
	defer p.stop(t)
	admin := p.addrs["admin HTTP"]
	at := time.Now()
	rw := func(i int) prompb.TimeSeries {
		return prompb.TimeSeries{Labels: []prompb.Label{{Name: "__name__", Value: "rw"}, {Name: "seq", Value: fmt.Sprint(i)}},
			Samples: []prompb.Sample{{Value: float64(i), Timestamp: at.UnixMilli()}}}
	}
	write := func(token string, wr *prompb.WriteRequest, wantCode int, want ...string) {
		t.Helper()
		code, body := remoteWriteAs(t, admin, token, wr)
		if code != wantCode {
			t.Errorf("%v: %d %q, want %d", wr.Timeseries, code, body, wantCode)
		}
		for _, w := range want {
			if !strings.Contains(body, w) {
				t.Errorf("%v: %q, want %q in it", wr.Timeseries, body, w)
			}
		}
	}
	write(tokA, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{rw(0), rw(1)}}, http.StatusNoContent)
	write(tokA, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{rw(0), rw(2), rw(3)}}, http.StatusBadRequest,
		"1 samples of 1 series refused", "series limit of 3")
	write(tokA, &prompb.WriteRequest{Timeseries: []prompb.TimeSeries{rw(4)},
		Metadata: []prompb.MetricMetadata{{Type: prompb.MetricMetadata_GAUGE, MetricFamilyName: "rw", Help: "h"}}},
		http.StatusBadRequest, "series limit of 3")
	five := &prompb.WriteRequest{}
	for i := range 5 {
		five.Timeseries = append(five.Timeseries, rw(i))
	}
	write(tokB, five, http.StatusNoContent)
	if got := promVectorAs(t, admin, tokA, "rw", at); len(got) != 3 || got[`rw{seq="2"}`] != 2 {
		t.Errorf("a's series: %v, want seq 0, 1 and 2", got)
	}
	if got := promVectorAs(t, admin, tokB, "rw", at); len(got) != 5 {
		t.Errorf("b's series: %v, want 5", got)
	}
	if n := scrapeAs(t, admin, tokOp)[`wirehouse_metricstore_rejected_points_total{reason="series_limit"}`]; n != 2 {
		t.Errorf("series_limit refusals counted: %v, want 2", n)
	}
}

// remoteWriteAs posts wr (remote write 1.0: snappy protobuf) to serve's
// admin address with an admin bearer token and returns the status and
// body of the answer.
func remoteWriteAs(t *testing.T, admin, token string, wr *prompb.WriteRequest) (int, string) {
	t.Helper()
	pb, err := wr.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	code, _, b := postWith(t, "http://"+admin+"/api/v1/write", snappy.Encode(nil, pb), "Content-Type", "application/x-protobuf",
		"Content-Encoding", "snappy", "X-Prometheus-Remote-Write-Version", "0.1.0", "Authorization", "Bearer "+token)
	return code, strings.TrimSpace(string(b))
}
