package serve

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
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

// Tokens of TestServeMetricTenants: OTLP and admin tokens for tenants a
// and b, and for the default tenant (one naming none, one naming the lake's
// default tenant, "default").
const (
	otlpTokA, otlpTokB, otlpTokDefault       = "otlp-tenant-a-0123456789", "otlp-tenant-b-0123456789", "otlp-default-0123456789"
	adminTokA, adminTokB, adminTokDefault    = "admin-tenant-a-0123456789", "admin-tenant-b-0123456789", "admin-default-0123456789"
	adminTokNamedDefault                     = "admin-named-default-01234"
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
	dir := t.TempDir()
	cfg.OTLP.Auth.BearerTokensFile = filepath.Join(dir, "otlp-tokens")
	cfg.Admin.Auth.BearerTokensFile = filepath.Join(dir, "admin-tokens")
	for path, content := range map[string]string{
		cfg.OTLP.Auth.BearerTokensFile:  otlpTokA + " a\n" + otlpTokB + " b\n" + otlpTokDefault + "\n",
		cfg.Admin.Auth.BearerTokensFile: adminTokA + " a\n" + adminTokB + " b\n" + adminTokDefault + "\n" + adminTokNamedDefault + " default\n",
	} {
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	s := startServer(t, cfg)
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
