package serve

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/snappy"
	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	config_util "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/prompb"
	"github.com/prometheus/prometheus/storage/remote"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
)

// bearerRT adds an Authorization header to every request.
type bearerRT struct {
	token string
	next  http.RoundTripper
}

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// Tokens of startTenantServer: OTLP and admin tokens for tenants a and b,
// and for the default tenant (one naming none, one naming the lake's
// default tenant, "default"), and an operator's admin token (naming no
// tenant).
const (
	otlpTokA, otlpTokB, otlpTokDefault       = "otlp-tenant-a-0123456789", "otlp-tenant-b-0123456789", "otlp-default-0123456789"
	adminTokA, adminTokB, adminTokDefault    = "admin-tenant-a-0123456789", "admin-tenant-b-0123456789", "admin-default-0123456789"
	adminTokNamedDefault, adminTokOperator   = "admin-named-default-01234", "admin-operator-0123456789"
	tenantDefault, tenantA, tenantB          = "", "a", "b"
	sharedTemp, rwShared, otlpOnlyB, rwOnlyB = "shared_temp", "rw_shared", "b_only_gauge", "b_only_rw"
)

// TestServeMetricTenants: with tenant tokens, tenants a and b and the
// default tenant write the same metrics (same names, same labels, each its
// own values) over OTLP (the OpenTelemetry Go SDK's exporters, HTTP and
// gRPC) and Prometheus remote write (Prometheus' own client); b also sends
// a __tenant__ attribute and label naming a, and metrics of its own. Each
// reads back only its own series, without __tenant__, through PromQL,
// /api/v1/series, label names and values, metadata, TSDB status and
// remote read (Prometheus' client, streamed chunks); a token naming the
// lake's default tenant reads as one naming none. delete_series deletes
// the caller's series only; snapshot and clean_tombstones are the default
// tenant's.
func TestServeMetricTenants(t *testing.T) {
	cfg := testConfig(t)
	cfg.Metrics.AdminAPI = true
	s := startTenantServer(t, cfg)
	a := s.Addrs()
	admin := "http://" + a.Admin.String()
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	ctx := context.Background()

	now := time.Now().Truncate(time.Second)
	rwAt := now.Add(-time.Minute)
	value := map[string]float64{tenantDefault: 1, tenantA: 2, tenantB: 3}
	for _, w := range []struct {
		tenant, otlpToken, adminToken, otlpTransport string
	}{
		{tenantDefault, otlpTokDefault, adminTokDefault, "http"},
		{tenantA, otlpTokA, adminTokA, "grpc"},
		{tenantB, otlpTokB, adminTokB, "http"},
	} {
		v := value[w.tenant]
		points := []metricdata.DataPoint[float64]{{Attributes: attribute.NewSet(attribute.String("room", "1")), Time: now, Value: v}}
		series := []prompb.TimeSeries{{
			Labels:  []prompb.Label{{Name: "__name__", Value: rwShared}, {Name: "job", Value: "rw"}},
			Samples: []prompb.Sample{{Value: 100 * v, Timestamp: rwAt.UnixMilli()}},
		}}
		var metrics []metricdata.Metrics
		switch w.tenant {
		case tenantDefault:
			// A label naming a, from the default tenant: stays the
			// default tenant's.
			series[0].Labels = []prompb.Label{{Name: "__name__", Value: rwShared}, {Name: "__tenant__", Value: "a"}, {Name: "job", Value: "rw"}}
		case tenantB:
			points = append(points, metricdata.DataPoint[float64]{
				Attributes: attribute.NewSet(attribute.String("room", "2"), attribute.String("__tenant__", "a")), Time: now, Value: 99})
			metrics = append(metrics, metricdata.Metrics{Name: otlpOnlyB, Description: "B only.",
				Data: metricdata.Gauge[float64]{DataPoints: []metricdata.DataPoint[float64]{{Time: now, Value: 1}}}})
			series = append(series, prompb.TimeSeries{
				Labels:  []prompb.Label{{Name: "__name__", Value: rwShared}, {Name: "__tenant__", Value: "a"}, {Name: "job", Value: "rw"}, {Name: "spoof", Value: "1"}},
				Samples: []prompb.Sample{{Value: 99, Timestamp: rwAt.UnixMilli()}},
			}, prompb.TimeSeries{
				Labels:  []prompb.Label{{Name: "__name__", Value: rwOnlyB}},
				Samples: []prompb.Sample{{Value: 1, Timestamp: rwAt.UnixMilli()}},
			})
		}
		metrics = append(metrics, metricdata.Metrics{Name: sharedTemp, Description: "Temperature.",
			Data: metricdata.Gauge[float64]{DataPoints: points}})
		exportOTLP(t, w.otlpTransport, a, w.otlpToken, &metricdata.ResourceMetrics{
			Resource:     resource.NewSchemaless(attribute.String("service.name", "svc"), attribute.String("host.name", "h1")),
			ScopeMetrics: []metricdata.ScopeMetrics{{Metrics: metrics}},
		})
		remoteWriteAs(t, admin, w.adminToken, series)
	}
	// OTLP without a token is refused, whatever the tenant tokens.
	if code, _ := post(t, "http://"+a.HTTP.String()+"/v1/metrics", "application/x-protobuf", nil); code != http.StatusUnauthorized {
		t.Errorf("OTLP metrics without a token: %d", code)
	}

	clientOf := func(token string) v1.API {
		c, err := api.NewClient(api.Config{Address: admin, RoundTripper: bearerRT{token, transport}})
		if err != nil {
			t.Fatal(err)
		}
		return v1.NewAPI(c)
	}
	for _, r := range []struct {
		name, token, tenant string
	}{
		{"default", adminTokDefault, tenantDefault},
		{"named default", adminTokNamedDefault, tenantDefault},
		{"a", adminTokA, tenantA},
		{"b", adminTokB, tenantB},
	} {
		t.Run(r.name, func(t *testing.T) {
			c := clientOf(r.token)
			v := value[r.tenant]
			isB := r.tenant == tenantB
			// PromQL: each sees its own values, under the same labels.
			wantTemp := map[string]float64{`{__name__="shared_temp", job="svc", room="1"}`: v}
			wantRW := map[string]float64{`{__name__="rw_shared", job="rw"}`: 100 * v}
			if isB {
				wantTemp[`{__name__="shared_temp", job="svc", room="2"}`] = 99
				wantRW[`{__name__="rw_shared", job="rw", spoof="1"}`] = 99
			}
			if got := instant(t, c, sharedTemp, now); !maps.Equal(got, wantTemp) {
				t.Errorf("%s = %v, want %v", sharedTemp, got, wantTemp)
			}
			if got := instant(t, c, rwShared, rwAt); !maps.Equal(got, wantRW) {
				t.Errorf("%s = %v, want %v", rwShared, got, wantRW)
			}
			if got := instant(t, c, `count({__tenant__!=""})`, now); len(got) != 0 {
				t.Errorf("series with a __tenant__ label: %v", got)
			}
			// Series, label names and values.
			sets, _, _, err := c.Series(ctx, []string{`{__name__=~".+"}`}, now.Add(-time.Hour), now.Add(time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, ls := range sets {
				if _, ok := ls["__tenant__"]; ok {
					t.Errorf("series %v has __tenant__", ls)
				}
				names = append(names, string(ls["__name__"]))
			}
			wantNames := []string{rwShared, sharedTemp, "target_info"}
			if isB {
				wantNames = []string{otlpOnlyB, rwOnlyB, rwShared, sharedTemp, "target_info"}
			}
			if slices.Sort(names); !slices.Equal(slices.Compact(names), wantNames) {
				t.Errorf("series names %v, want %v", names, wantNames)
			}
			vals, _, _, err := c.LabelValues(ctx, "__name__", nil, time.Time{}, time.Time{})
			if err != nil || !slices.Equal(labelValues(vals), wantNames) {
				t.Errorf("__name__ values %v, %v; want %v", vals, err, wantNames)
			}
			rooms, _, _, err := c.LabelValues(ctx, "room", nil, time.Time{}, time.Time{})
			if wantRooms := map[bool][]string{false: {"1"}, true: {"1", "2"}}[isB]; err != nil || !slices.Equal(labelValues(rooms), wantRooms) {
				t.Errorf("room values %v, %v; want %v", rooms, err, wantRooms)
			}
			if tv, _, _, err := c.LabelValues(ctx, "__tenant__", nil, time.Time{}, time.Time{}); err != nil || len(tv) != 0 {
				t.Errorf("__tenant__ values %v, %v", tv, err)
			}
			lnames, _, _, err := c.LabelNames(ctx, nil, time.Time{}, time.Time{})
			if err != nil || slices.Contains(lnames, "__tenant__") || slices.Contains(lnames, "spoof") != isB {
				t.Errorf("label names %v, %v", lnames, err)
			}
			// Metadata, from OTLP.
			md, err := c.Metadata(ctx, "", "")
			if _, hasB := md[otlpOnlyB]; err != nil || len(md[sharedTemp]) != 1 || md[sharedTemp][0].Help != "Temperature." || hasB != isB {
				t.Errorf("metadata %v, %v", md, err)
			}
			// TSDB status: the tenant's head series alone.
			st, err := c.TSDB(ctx)
			wantSeries := 3 // shared_temp, rw_shared, target_info
			if isB {
				wantSeries = 7 // and room 2, spoof, b's own two
			}
			if err != nil || st.HeadStats.NumSeries != wantSeries {
				t.Errorf("tsdb status %+v, %v; want %d series", st.HeadStats, err, wantSeries)
			}
			for _, p := range st.SeriesCountByLabelValuePair {
				if strings.HasPrefix(p.Name, "__tenant__") {
					t.Errorf("tsdb status names %s", p.Name)
				}
			}
			// Remote read, with Prometheus' client (streamed chunks,
			// which the server sorts).
			got := remoteRead(t, admin, r.token, rwShared, rwAt)
			if !maps.Equal(got, wantRW) {
				t.Errorf("remote read %s = %v, want %v", rwShared, got, wantRW)
			}
		})
	}

	// delete_series: a deletes its rw_shared; b's and the default
	// tenant's stay. Snapshot and clean_tombstones: default tenant only.
	ca, cb, cd := clientOf(adminTokA), clientOf(adminTokB), clientOf(adminTokDefault)
	if err := ca.DeleteSeries(ctx, []string{rwShared}, time.Time{}, time.Time{}); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]v1.API{"a": ca, "b": cb, "default": cd} {
		t.Run(name, func(t *testing.T) {
			if got := instant(t, c, `count(`+rwShared+`)`, rwAt); (len(got) == 0) != (name == "a") {
				t.Errorf("after a's delete_series: counts %v", got)
			}
		})
	}
	for _, op := range []struct {
		name string
		do   func(v1.API) error
	}{
		{"snapshot", func(c v1.API) error { _, err := c.Snapshot(ctx, true); return err }},
		{"clean_tombstones", func(c v1.API) error { return c.CleanTombstones(ctx) }},
	} {
		t.Run(op.name, func(t *testing.T) {
			var apiErr *v1.Error
			if err := op.do(cb); !errors.As(err, &apiErr) || !strings.Contains(apiErr.Detail, "only the default tenant") {
				t.Errorf("as b: %v, want refused", err)
			}
			if err := op.do(cd); err != nil {
				t.Errorf("as the default tenant: %v", err)
			}
		})
	}
}

// startTenantServer starts a server with cfg and the tokens above: an
// OTLP tokens file and an admin tokens file.
func startTenantServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	dir := t.TempDir()
	cfg.OTLP.Auth.BearerTokensFile = filepath.Join(dir, "otlp-tokens")
	cfg.Admin.Auth.BearerTokensFile = filepath.Join(dir, "admin-tokens")
	for path, content := range map[string]string{
		cfg.OTLP.Auth.BearerTokensFile: otlpTokA + " a\n" + otlpTokB + " b\n" + otlpTokDefault + "\n",
		cfg.Admin.Auth.BearerTokensFile: adminTokA + " a\n" + adminTokB + " b\n" + adminTokDefault + "\n" +
			adminTokNamedDefault + " default\n" + adminTokOperator + " role=operator\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return startServer(t, cfg)
}

// exportOTLP exports rm with the OpenTelemetry Go SDK's OTLP exporter
// over transport ("http" or "grpc") with token.
func exportOTLP(t *testing.T, transport string, a Addrs, token string, rm *metricdata.ResourceMetrics) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	headers := map[string]string{"Authorization": "Bearer " + token}
	var (
		exp sdkmetric.Exporter
		err error
	)
	if transport == "grpc" {
		exp, err = otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpoint(a.GRPC.String()), otlpmetricgrpc.WithInsecure(),
			otlpmetricgrpc.WithHeaders(headers), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}))
	} else {
		exp, err = otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpoint(a.HTTP.String()), otlpmetrichttp.WithInsecure(),
			otlpmetrichttp.WithHeaders(headers), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	}
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Shutdown(ctx)
	if err := exp.Export(ctx, rm); err != nil {
		t.Fatalf("export over %s: %v", transport, err)
	}
}

// clientConfig is Prometheus' remote storage client configuration for
// path on the admin server, with token as its bearer credentials.
func clientConfig(t *testing.T, admin, path, token string) *remote.ClientConfig {
	t.Helper()
	u, err := url.Parse(admin + path)
	if err != nil {
		t.Fatal(err)
	}
	return &remote.ClientConfig{
		URL:     &config_util.URL{URL: u},
		Timeout: model.Duration(10 * time.Second),
		// Prometheus' default (config.DefaultChunkedReadLimit).
		ChunkedReadLimit: 5e7,
		HTTPClientConfig: config_util.HTTPClientConfig{
			Authorization: &config_util.Authorization{Type: "Bearer", Credentials: config_util.Secret(token)},
		},
	}
}

// remoteWriteAs sends series with Prometheus' remote write client, as the
// tenant of token.
func remoteWriteAs(t *testing.T, admin, token string, series []prompb.TimeSeries) {
	t.Helper()
	c, err := remote.NewWriteClient("tenant-test", clientConfig(t, admin, "/api/v1/write", token))
	if err != nil {
		t.Fatal(err)
	}
	pb, err := (&prompb.WriteRequest{Timeseries: series}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Store(context.Background(), snappy.Encode(nil, pb), 0); err != nil {
		t.Fatalf("remote write: %v", err)
	}
}

// remoteRead reads the samples of metric name at at with Prometheus'
// remote read client, as the tenant of token: values by series.
func remoteRead(t *testing.T, admin, token, name string, at time.Time) map[string]float64 {
	t.Helper()
	c, err := remote.NewReadClient("tenant-test", clientConfig(t, admin, "/api/v1/read", token))
	if err != nil {
		t.Fatal(err)
	}
	q := &prompb.Query{
		StartTimestampMs: at.Add(-time.Minute).UnixMilli(),
		EndTimestampMs:   at.Add(time.Minute).UnixMilli(),
		Matchers:         []*prompb.LabelMatcher{{Type: prompb.LabelMatcher_EQ, Name: "__name__", Value: name}},
	}
	set, err := c.Read(context.Background(), q, true)
	if err != nil {
		t.Fatalf("remote read: %v", err)
	}
	out := map[string]float64{}
	for set.Next() {
		it := set.At().Iterator(nil)
		for it.Next() != 0 {
			_, v := it.At()
			out[set.At().Labels().String()] = v
		}
	}
	if err := set.Err(); err != nil {
		t.Fatalf("remote read: %v", err)
	}
	return out
}

// instant runs query at at and returns the vector's values by series.
func instant(t *testing.T, c v1.API, query string, at time.Time) map[string]float64 {
	t.Helper()
	v, _, _, err := c.Query(context.Background(), query, at)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	out := map[string]float64{}
	vec, _ := v.(model.Vector)
	for _, smp := range vec {
		out[labelString(smp.Metric)] = float64(smp.Value)
	}
	return out
}

// labelString writes m as Prometheus' labels.Labels.String does.
func labelString(m model.Metric) string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteByte('{')
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + `="` + string(m[model.LabelName(n)]) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

func labelValues(vs model.LabelValues) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// A tenant's data in TestServeTenantIsolation: its service.name, metric
// and trace id, each a secret from the other tenant.
type tenantSecrets struct {
	name, otlpToken, adminToken string
	service, metric             string
	traceID                     pcommon.TraceID
}

func (ts tenantSecrets) traceHex() string { return hex.EncodeToString(ts.traceID[:]) }

// TestServeTenantIsolation: tenants a and b send logs, traces and metrics
// over OTLP with their tokens, each under a service name, metric name and
// trace id of its own. Through every read API (Loki's labels, label
// values, query_range and series; Jaeger's services, search and trace;
// Tempo's trace; Prometheus' label values, series and query; remote
// read), the status page's JSON, /metrics and pprof, each finds its own
// data and nothing of the other's: /metrics and pprof answer 403 but to
// the operator's token, which sees both tenants there and on the status
// page.
func TestServeTenantIsolation(t *testing.T) {
	cfg := testConfig(t)
	cfg.Admin.Pprof = true
	s := startTenantServer(t, cfg)
	a := s.Addrs()
	admin := "http://" + a.Admin.String()
	tenants := []tenantSecrets{
		{name: tenantA, otlpToken: otlpTokA, adminToken: adminTokA, service: "secret-svc-a", metric: "secret_metric_a",
			traceID: pcommon.TraceID{0xa1, 0xa2, 0xa3, 0xa4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
		{name: tenantB, otlpToken: otlpTokB, adminToken: adminTokB, service: "secret-svc-b", metric: "secret_metric_b",
			traceID: pcommon.TraceID{0xb1, 0xb2, 0xb3, 0xb4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}},
	}
	now := time.Now()
	for _, ts := range tenants {
		for path, body := range map[string][]byte{
			"/v1/logs": secretLogs(t, ts, now), "/v1/traces": secretTraces(t, ts, now), "/v1/metrics": secretMetrics(t, ts, now),
		} {
			code, resp := request(t, http.MethodPost, "http://"+a.HTTP.String()+path, ts.otlpToken, "application/x-protobuf", body)
			if code != http.StatusOK {
				t.Fatalf("%s as %s: %d %s", path, ts.name, code, resp)
			}
		}
	}

	window := url.Values{"start": {strconv.FormatInt(now.Add(-time.Hour).UnixNano(), 10)},
		"end": {strconv.FormatInt(now.Add(time.Hour).UnixNano(), 10)}}
	jaegerWindow := "start=" + strconv.FormatInt(now.Add(-time.Hour).UnixMicro(), 10) + "&end=" + strconv.FormatInt(now.Add(time.Hour).UnixMicro(), 10)
	for i, me := range tenants {
		other := tenants[1-i]
		t.Run(me.name, func(t *testing.T) {
			// get asks path as me and checks the answer's status, that
			// it names none of other's secrets, and that it names want.
			get := func(method, path string, wantCode int, want string, body []byte) string {
				t.Helper()
				ctype := "application/x-www-form-urlencoded"
				if body != nil && method == http.MethodPost {
					ctype = "application/x-protobuf"
				}
				code, resp := request(t, method, admin+path, me.adminToken, ctype, body)
				if code != wantCode {
					t.Errorf("%s %s: %d, want %d: %.300s", method, path, code, wantCode, resp)
				}
				for _, secret := range []string{other.service, other.metric, other.traceHex()} {
					if strings.Contains(resp, secret) {
						t.Errorf("%s %s as %s shows %s's %q: %.500s", method, path, me.name, other.name, secret, resp)
					}
				}
				if want != "" && !strings.Contains(resp, want) {
					t.Errorf("%s %s as %s lacks its own %q: %.500s", method, path, me.name, want, resp)
				}
				return resp
			}
			sel := url.QueryEscape(`{service_name=~".+"}`)
			// Loki.
			get("GET", "/loki/api/v1/labels?"+window.Encode(), 200, "service_name", nil)
			get("GET", "/loki/api/v1/label/service_name/values?"+window.Encode(), 200, me.service, nil)
			get("GET", "/loki/api/v1/query_range?limit=100&query="+sel+"&"+window.Encode(), 200, me.service, nil)
			get("GET", "/loki/api/v1/query_range?limit=100&query="+url.QueryEscape(`{service_name="`+other.service+`"}`)+"&"+window.Encode(), 200, "", nil)
			get("GET", "/loki/api/v1/series?match[]="+sel+"&"+window.Encode(), 200, me.service, nil)
			// Jaeger.
			get("GET", "/jaeger/api/services", 200, me.service, nil)
			get("GET", "/jaeger/api/traces?limit=20&service="+me.service+"&"+jaegerWindow, 200, me.traceHex(), nil)
			get("GET", "/jaeger/api/traces?limit=20&service="+other.service+"&"+jaegerWindow, 200, "", nil)
			get("GET", "/jaeger/api/traces/"+me.traceHex(), 200, me.service, nil)
			get("GET", "/jaeger/api/traces/"+other.traceHex(), 404, "", nil)
			// Tempo.
			get("GET", "/tempo/api/traces/"+me.traceHex(), 200, me.service, nil)
			get("GET", "/tempo/api/traces/"+other.traceHex(), 404, "", nil)
			tempoWindow := fmt.Sprintf("start=%d&end=%d", now.Add(-time.Hour).Unix(), now.Add(time.Minute).Unix())
			get("GET", "/tempo/api/search?q="+url.QueryEscape(`{ }`)+"&"+tempoWindow, 200, me.traceHex(), nil)
			get("GET", "/tempo/api/search?q="+url.QueryEscape(`{ resource.service.name = "`+other.service+`" }`)+"&"+tempoWindow, 200, `"traces":[]`, nil)
			// Prometheus.
			get("GET", "/api/v1/label/__name__/values", 200, me.metric, nil)
			get("GET", "/api/v1/label/job/values", 200, me.service, nil)
			get("GET", "/api/v1/series?match[]="+url.QueryEscape(`{__name__=~".+"}`), 200, me.metric, nil)
			get("GET", "/api/v1/query?query="+url.QueryEscape(`{__name__=~".+"}`)+"&time="+strconv.FormatInt(now.Unix(), 10), 200, me.service, nil)
			get("GET", "/api/v1/query?query="+url.QueryEscape(other.metric)+"&time="+strconv.FormatInt(now.Unix(), 10), 200, "", nil)
			// Remote read, a snappy protobuf ReadRequest; the answer is
			// decoded before it is searched.
			rr := rawRemoteRead(t, admin, me.adminToken, now)
			for _, secret := range []string{other.service, other.metric} {
				if strings.Contains(rr, secret) {
					t.Errorf("remote read as %s shows %s's %q", me.name, other.name, secret)
				}
			}
			if !strings.Contains(rr, me.metric) || !strings.Contains(rr, me.service) {
				t.Errorf("remote read as %s lacks its own series: %.500s", me.name, rr)
			}
			// /metrics and pprof: operators' only.
			get("GET", "/metrics", http.StatusForbidden, "", nil)
			get("GET", "/debug/pprof/cmdline", http.StatusForbidden, "", nil)
			get("GET", "/debug/pprof/", http.StatusForbidden, "", nil)
			// The status page: its own services once sampled, no other
			// tenant's series or name.
			st := pollStatus(t, admin, me.adminToken, me.service)
			if st.Tenant != me.name {
				t.Errorf("status tenant %q, want %q", st.Tenant, me.name)
			}
			for view, series := range st.Views {
				for _, sr := range series {
					if tn, ok := sr.Labels["tenant"]; ok && tn != me.name {
						t.Errorf("status view %s shows tenant %q's series %v", view, tn, sr.Labels)
					}
				}
			}
			for _, kv := range st.Settings {
				if kv.Name == "Default tenant" || strings.Contains(kv.Value, "tenant") {
					t.Errorf("status setting %s: %s names a tenant", kv.Name, kv.Value)
				}
			}
			get("GET", "/api/wirehouse/status", 200, me.service, nil)
		})
	}
	t.Run("operator", func(t *testing.T) {
		code, metrics := request(t, http.MethodGet, admin+"/metrics", adminTokOperator, "", nil)
		for _, ts := range tenants {
			if want := `service="` + ts.service + `",signal="logs",tenant="` + ts.name + `"} 1`; code != 200 || !strings.Contains(metrics, want) {
				t.Errorf("/metrics as the operator: %d, lacks %s:\n%s", code, want, grep(metrics, "wirehouse_sink_records_total"))
			}
		}
		if code, _ := request(t, http.MethodGet, admin+"/debug/pprof/cmdline", adminTokOperator, "", nil); code != 200 {
			t.Errorf("pprof as the operator: %d", code)
		}
		st := pollStatus(t, admin, adminTokOperator, tenants[1].service)
		seen := map[string]string{}
		for _, sr := range st.Views["services"] {
			seen[sr.Labels["service"]] = sr.Labels["tenant"]
		}
		if st.Tenant != "" || seen[tenants[0].service] != tenantA || seen[tenants[1].service] != tenantB {
			t.Errorf("status as the operator: tenant %q, services %v; want every tenant's", st.Tenant, seen)
		}
		if !slices.ContainsFunc(st.Settings, func(kv statusSetting) bool { return kv.Name == "Default tenant" && kv.Value == "default" }) {
			t.Errorf("status settings as the operator %v lack the default tenant", st.Settings)
		}
	})
}

// request sends body (nil: none) to url with token and returns the
// status and the body.
func request(t *testing.T, method, url, token, contentType string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" && body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

type statusSetting struct{ Name, Value string }

// statusJSON is what the tests read of /api/wirehouse/status.
type statusJSON struct {
	Tenant   string
	Settings []statusSetting
	Views    map[string][]struct{ Labels map[string]string }
}

// pollStatus reads the status JSON as token until its services view
// names service (the sampler samples every 5 s).
func pollStatus(t *testing.T, admin, token, service string) statusJSON {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		code, body := request(t, http.MethodGet, admin+"/api/wirehouse/status", token, "", nil)
		var st statusJSON
		if err := json.Unmarshal([]byte(body), &st); code != 200 || err != nil {
			t.Fatalf("status: %d %v %.300s", code, err, body)
		}
		for _, sr := range st.Views["services"] {
			if sr.Labels["service"] == service {
				return st
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed service %s: %.1000s", service, body)
		}
	}
}

// rawRemoteRead posts a remote read request for every series around at
// as token, and returns the answer's series as text.
func rawRemoteRead(t *testing.T, admin, token string, at time.Time) string {
	t.Helper()
	rreq := &prompb.ReadRequest{Queries: []*prompb.Query{{
		StartTimestampMs: at.Add(-time.Hour).UnixMilli(), EndTimestampMs: at.Add(time.Hour).UnixMilli(),
		Matchers: []*prompb.LabelMatcher{{Type: prompb.LabelMatcher_RE, Name: "__name__", Value: ".+"}},
	}}}
	pb, err := rreq.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, admin+"/api/v1/read", bytes.NewReader(snappy.Encode(nil, pb)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("X-Prometheus-Remote-Read-Version", "0.1.0")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("remote read: %d %s", resp.StatusCode, b)
	}
	raw, err := snappy.Decode(nil, b)
	if err != nil {
		t.Fatalf("remote read answer: %v", err)
	}
	var rresp prompb.ReadResponse
	if err := rresp.Unmarshal(raw); err != nil {
		t.Fatalf("remote read answer: %v", err)
	}
	var out strings.Builder
	for _, qr := range rresp.Results {
		for _, ts := range qr.Timeseries {
			for _, l := range ts.Labels {
				out.WriteString(l.Name + "=" + l.Value + " ")
			}
			out.WriteString("\n")
		}
	}
	return out.String()
}

// secretResource sets ts's service.name on r.
func secretResource(r pcommon.Resource, ts tenantSecrets) {
	r.Attributes().PutStr("service.name", ts.service)
}

func secretLogs(t *testing.T, ts tenantSecrets, now time.Time) []byte {
	t.Helper()
	req := plogotlp.NewExportRequest()
	rl := req.Logs().ResourceLogs().AppendEmpty()
	secretResource(rl.Resource(), ts)
	lr := rl.ScopeLogs().AppendEmpty().LogRecords().AppendEmpty()
	lr.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	lr.Body().SetStr("a log line of " + ts.service)
	lr.SetTraceID(ts.traceID)
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func secretTraces(t *testing.T, ts tenantSecrets, now time.Time) []byte {
	t.Helper()
	req := ptraceotlp.NewExportRequest()
	rs := req.Traces().ResourceSpans().AppendEmpty()
	secretResource(rs.Resource(), ts)
	sp := rs.ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.SetTraceID(ts.traceID)
	sp.SetSpanID(pcommon.SpanID{1, 2, 3, 4, 5, 6, 7, 8})
	sp.SetName("op of " + ts.service)
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(now.Add(-2 * time.Second)))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func secretMetrics(t *testing.T, ts tenantSecrets, now time.Time) []byte {
	t.Helper()
	req := pmetricotlp.NewExportRequest()
	rm := req.Metrics().ResourceMetrics().AppendEmpty()
	secretResource(rm.Resource(), ts)
	m := rm.ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
	m.SetName(ts.metric)
	dp := m.SetEmptyGauge().DataPoints().AppendEmpty()
	dp.SetTimestamp(pcommon.NewTimestampFromTime(now.Add(-time.Second)))
	dp.SetDoubleValue(1)
	b, err := req.MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
