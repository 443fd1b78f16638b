package jaegerhttp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/jaegerhttp"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/lakeread/lakereadtest"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/internal/tenant"

	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
)

// server serves the API over a lake holding bodies[tenant], the
// request's tenant taken from an X-Tenant header as the admin port takes
// it from a bearer token.
func server(t *testing.T, bodies map[string][]byte, set ...func(*lakeread.Config)) string {
	t.Helper()
	r := lakereadtest.Reader(t, bodies, set...)
	cfg := jaegerhttp.DefaultConfig()
	cfg.Reader, cfg.Tenant = r, "default"
	h, err := jaegerhttp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	h.Register(mux, "/jaeger")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tn := r.Header.Get("X-Tenant"); tn != "" {
			r = r.WithContext(tenant.NewContext(r.Context(), tn))
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/jaeger"
}

type envelope struct {
	Data   json.RawMessage `json:"data"`
	Total  int             `json:"total"`
	Errors []struct {
		Code    int    `json:"code"`
		Msg     string `json:"msg"`
		TraceID string `json:"traceID"`
	} `json:"errors"`
}

func get(t *testing.T, url, tn string) (int, envelope) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if tn != "" {
		req.Header.Set("X-Tenant", tn)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var env envelope
	if err := json.NewDecoder(resp.Body).Decode(&env); err != nil {
		t.Fatalf("GET %s: %d, not a Jaeger envelope: %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode, env
}

// traceIDsOf returns the trace ids of a synth request, as Jaeger writes
// them, and its services.
func traceIDsOf(t *testing.T, body []byte) (ids []string, services map[string]bool) {
	req := ptraceotlp.NewExportRequest()
	if err := req.UnmarshalProto(body); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	services = map[string]bool{}
	for _, rs := range req.Traces().ResourceSpans().All() {
		s, _ := rs.Resource().Attributes().Get("service.name")
		services[s.Str()] = true
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				id := sp.TraceID().String()
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
	}
	return ids, services
}

// TestTenantsAreApart: a request of tenant B sees none of tenant A's
// services or traces, and the default tenant's are its own.
func TestTenantsAreApart(t *testing.T) {
	a := synth.Traces(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 40})
	b := synth.Traces(synth.Config{Seed: 2, Resources: 2, ScopesPerResource: 1, TotalRecords: 40})
	base := server(t, map[string][]byte{"tenant-a": a, "default": b})
	idsA, _ := traceIDsOf(t, a)
	idsB, _ := traceIDsOf(t, b)
	for _, c := range []struct {
		tenant   string
		own, not []string
	}{{"tenant-a", idsA, idsB}, {"", idsB, idsA}, {"tenant-c", nil, append(idsA, idsB...)}} {
		for _, id := range c.own {
			if code, _ := get(t, base+"/api/traces/"+id, c.tenant); code != http.StatusOK {
				t.Errorf("tenant %q, its trace %s: %d", c.tenant, id, code)
			}
		}
		for _, id := range c.not {
			if code, _ := get(t, base+"/api/traces/"+id, c.tenant); code != http.StatusNotFound {
				t.Errorf("tenant %q, another's trace %s: %d, want 404", c.tenant, id, code)
			}
		}
		_, env := get(t, base+"/api/services", c.tenant)
		var svcs []string
		json.Unmarshal(env.Data, &svcs)
		if (len(svcs) == 0) != (c.own == nil) || env.Total != len(svcs) {
			t.Errorf("tenant %q: services %q, total %d", c.tenant, svcs, env.Total)
		}
	}
}

// TestBadRequests: malformed parameters are 400 with Jaeger's envelope
// naming the problem; an unknown trace is 404; a read past the byte limit
// is 413 with the limit in the message.
func TestBadRequests(t *testing.T) {
	body := synth.Traces(synth.Config{Seed: 3, Resources: 1, ScopesPerResource: 1, TotalRecords: 20, Start: time.Now().Add(-time.Hour)})
	base := server(t, map[string][]byte{"default": body})
	for path, want := range map[string]string{
		"/api/traces":                                         "parameter 'service' is required",
		"/api/operations":                                     "parameter 'service' is required",
		"/api/traces?service=a&start=x":                       "unable to parse param 'start'",
		"/api/traces?service=a&limit=x":                       "unable to parse param 'limit'",
		"/api/traces?service=a&minDuration=2s&maxDuration=1s": "'maxDuration' should be greater than 'minDuration'",
		"/api/traces?service=a&tag=novalue":                   "malformed 'tag' parameter",
		"/api/traces?service=a&tags=%7B":                      "malformed 'tags' parameter",
		"/api/traces/" + strings.Repeat("a", 33):              "want 1 to 32 hex digits",
		"/api/traces/xyz":                                     "not hex",
		"/api/traces?traceID=xyz":                             "not hex",
	} {
		code, env := get(t, base+path, "")
		if code != http.StatusBadRequest || len(env.Errors) != 1 || !strings.Contains(env.Errors[0].Msg, want) || env.Errors[0].Code != 400 {
			t.Errorf("GET %s: %d %+v, want 400 %q", path, code, env.Errors, want)
		}
	}
	if code, env := get(t, base+"/api/traces/"+strings.Repeat("1", 32), ""); code != http.StatusNotFound || env.Errors[0].Msg != "trace not found" {
		t.Errorf("unknown trace: %d %+v", code, env.Errors)
	}
	// traceID= in a search: found ones in data, the others in errors.
	ids, _ := traceIDsOf(t, body)
	code, env := get(t, base+"/api/traces?traceID="+ids[0]+"&traceID=00000000000000000000000000000001", "")
	var traces []struct {
		TraceID string `json:"traceID"`
	}
	json.Unmarshal(env.Data, &traces)
	if code != http.StatusOK || len(traces) != 1 || len(env.Errors) != 1 || env.Errors[0].TraceID != "0000000000000001" {
		t.Errorf("search by ids: %d, %d traces, errors %+v", code, len(traces), env.Errors)
	}

	small := server(t, map[string][]byte{"default": body}, func(c *lakeread.Config) { c.MaxBytes = 100 })
	code, env = get(t, small+"/api/traces/"+ids[0], "")
	if code != http.StatusRequestEntityTooLarge || !strings.Contains(env.Errors[0].Msg, "limit of 100 bytes") {
		t.Errorf("past the byte limit: %d %+v", code, env.Errors)
	}
}

// TestSearchDefaults: without start and end a search covers the last 48
// hours, as Jaeger's does: traces of an hour ago are found, of three days
// ago not.
func TestSearchDefaults(t *testing.T) {
	now := time.Now()
	recent := synth.Traces(synth.Config{Seed: 4, Resources: 1, ScopesPerResource: 1, TotalRecords: 10, Start: now.Add(-time.Hour)})
	old := synth.Traces(synth.Config{Seed: 6, Resources: 1, ScopesPerResource: 1, TotalRecords: 10, Start: now.Add(-72 * time.Hour)})
	// Two requests end to end are one request with both's resources.
	base := server(t, map[string][]byte{"default": append(append([]byte{}, recent...), old...)})
	recentIDs, svcs := traceIDsOf(t, recent)
	oldIDs, _ := traceIDsOf(t, old)
	want := map[string]bool{}
	for _, id := range recentIDs {
		want[strings.TrimLeft(id, "0")] = true
	}
	got := map[string]bool{}
	for svc := range svcs {
		code, env := get(t, base+"/api/traces?service="+svc, "")
		var traces []struct {
			TraceID string `json:"traceID"`
		}
		json.Unmarshal(env.Data, &traces)
		if code != http.StatusOK {
			t.Fatalf("service %s: %d", svc, code)
		}
		for _, tr := range traces {
			got[strings.TrimLeft(tr.TraceID, "0")] = true
		}
	}
	for _, id := range oldIDs {
		if got[strings.TrimLeft(id, "0")] {
			t.Errorf("trace %s of three days ago found", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d traces found, want the %d of an hour ago", len(got), len(want))
	}
}

// TestTenantHeader: the read side's tenant rule (readapi.TenantRule).
// Without tokens (AnyTenant) x-tenant names any tenant, and a header
// that is no tenant name is 400; with tokens it may only repeat the
// token's tenant: naming another is 403 in Jaeger's envelope.
func TestTenantHeader(t *testing.T) {
	a := synth.Traces(synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 1, TotalRecords: 40})
	r := lakereadtest.Reader(t, map[string][]byte{"tenant-a": a})
	for _, anyTenant := range []bool{true, false} {
		cfg := jaegerhttp.DefaultConfig()
		cfg.Reader, cfg.Tenant, cfg.AnyTenant = r, "default", anyTenant
		h, err := jaegerhttp.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		mux := http.NewServeMux()
		h.Register(mux, "/jaeger")
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tn := r.Header.Get("Token-Tenant"); tn != "" { // as the admin port's bearer tokens do
				r = r.WithContext(tenant.NewContext(r.Context(), tn))
			}
			mux.ServeHTTP(w, r)
		}))
		defer srv.Close()
		services := func(token, header string) (int, []string) {
			req, _ := http.NewRequest("GET", srv.URL+"/jaeger/api/services", nil)
			if token != "" {
				req.Header.Set("Token-Tenant", token)
			}
			if header != "" {
				req.Header.Set("x-tenant", header)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var env envelope
			json.NewDecoder(resp.Body).Decode(&env)
			var svcs []string
			json.Unmarshal(env.Data, &svcs)
			return resp.StatusCode, svcs
		}
		if anyTenant {
			if code, svcs := services("", "tenant-a"); code != 200 || len(svcs) == 0 {
				t.Errorf("no tokens, x-tenant tenant-a: %d %q", code, svcs)
			}
			if code, _ := services("", "../etc"); code != 400 {
				t.Errorf("no tokens, x-tenant ../etc: %d, want 400", code)
			}
			continue
		}
		if code, svcs := services("tenant-a", "tenant-a"); code != 200 || len(svcs) == 0 {
			t.Errorf("token of tenant-a repeating it: %d %q", code, svcs)
		}
		if code, svcs := services("tenant-b", "tenant-a"); code != 403 || len(svcs) != 0 {
			t.Errorf("token of tenant-b naming tenant-a: %d %q, want 403", code, svcs)
		}
		if code, svcs := services("", "tenant-a"); code != 403 || len(svcs) != 0 {
			t.Errorf("default token naming tenant-a: %d %q, want 403", code, svcs)
		}
	}
}

// TestCanceled: a query whose client went away is answered as the read
// side answers it, 499 in Jaeger's envelope, whatever error the query
// made of the cancelation.
func TestCanceled(t *testing.T) {
	cfg := jaegerhttp.DefaultConfig()
	cfg.Reader, cfg.Tenant = lakereadtest.Reader(t, nil), "default"
	h, err := jaegerhttp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, err := range []error{context.Canceled, errors.New("read row group: broken pipe")} {
		w := httptest.NewRecorder()
		h.WriteError(w, httptest.NewRequest("GET", "/jaeger/api/services", nil).WithContext(ctx), err)
		var env envelope
		if jerr := json.Unmarshal(w.Body.Bytes(), &env); jerr != nil || w.Code != 499 || len(env.Errors) != 1 || env.Errors[0].Code != 499 || env.Errors[0].Msg != err.Error() {
			t.Errorf("%v: %d %s", err, w.Code, w.Body)
		}
	}
}
