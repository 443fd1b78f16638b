package webui_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/serve"
	"github.com/wirehouse/wirehouse/internal/tracemetrics/graphtest"
)

// testServicesPage drives the service map and the traces page's RED
// panels against a serve of their own, its trace metrics flushed every
// second, fed graphtest's trace twice a second over OTLP/HTTP (user →
// frontend → backend, which fails; backend → orders, a database, and →
// payments, an uninstrumented peer). Once Jaeger's dependencies have its
// edges, the map has its nodes (the services linked, the virtual nodes
// not), an edge per call and the table its edges with their type, a
// rate, the failed share and latencies; a service's node opens the
// traces page's search for it, whose RED panels draw frontend's rate,
// errors and p95 duration and link back to the map, focused on it.
func testServicesPage(t *testing.T, browser context.Context, shots string) {
	srv := startServe(t, func(c *serve.Config) { c.TraceMetrics.FlushInterval = time.Second })
	sendGraph(t, srv.http)
	want := make([]string, len(graphtest.Edges))
	for i, e := range graphtest.Edges {
		want[i] = e[0] + ">" + e[1]
	}
	var edges []string
	for deadline := time.Now().Add(30 * time.Second); !slices.Equal(edges, want); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("Jaeger's dependencies: %q, want %q", edges, want)
		}
		var deps struct {
			Data []struct{ Parent, Child string }
		}
		getJSON(t, srv.url+"/jaeger/api/dependencies", "", &deps)
		edges = edges[:0]
		for _, d := range deps.Data {
			edges = append(edges, d.Parent+">"+d.Child)
		}
	}

	tab := newTab(t, browser)
	tab.open(srv.url + "/services")
	tab.waitReady()
	tab.timings("services")
	nodes := eval[[]string](tab, `[...document.querySelectorAll('.service-map .node')].map(n => n.dataset.node + ":" + n.dataset.kind).sort()`)
	if want := []string{"backend:service", "frontend:service", "orders:database", "payments:peer", "user:user"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %q, want %q; page says %q", nodes, want, tab.text())
	}
	if links := eval[[]string](tab, `[...document.querySelectorAll('.service-map a.node')].map(n => n.dataset.node).sort()`); !slices.Equal(links, []string{"backend", "frontend"}) {
		t.Errorf("nodes linked to their traces: %q, want the services backend and frontend", links)
	}
	colors := eval[[]string](tab, `[...document.querySelectorAll('.service-map .node')].map(n => n.dataset.node + ":" + n.getAttribute("class").split(" ").find(c => c.startsWith("e-"))).sort()`)
	if want := []string{"backend:e-err", "frontend:e-ok", "orders:e-ok", "payments:e-ok", "user:e-none"}; !slices.Equal(colors, want) {
		t.Errorf("node colors %q, want %q", colors, want)
	}
	if n := eval[int](tab, `document.querySelectorAll('.service-map path.edge').length`); n != len(want) {
		t.Errorf("%d edges drawn, want %d", n, len(want))
	}
	type row struct {
		Edge, Type, Rate, Err, P50, P95 string
	}
	rows := eval[[]row](tab, `[...document.querySelectorAll('.edge-table tr.edge-row')].map(r => ({
		Edge: r.dataset.client + ">" + r.dataset.server, Type: r.dataset.type, Rate: r.dataset.rate, Err: r.dataset.error,
		P50: r.cells[5].textContent, P95: r.cells[6].textContent}))`)
	types := map[string]string{"backend>orders": "database", "backend>payments": "virtual_node", "frontend>backend": "", "user>frontend": "virtual_node"}
	var got []string
	for _, r := range rows {
		got = append(got, r.Edge)
		failed := "0"
		if r.Edge == "frontend>backend" {
			failed = "1"
		}
		if r.Type != types[r.Edge] || r.Rate == "" || r.Rate == "0" || r.Err != failed || r.P50 == "–" || r.P95 == "–" {
			t.Errorf("edge %+v: want type %q, a rate, errors %s and latencies", r, types[r.Edge], failed)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("the table's edges %q, want %q", got, want)
	}
	tab.shot(shots, "services", false)

	// A service's node: the traces page's search for it, with its RED
	// panels.
	href := eval[string](tab, `document.querySelector('.service-map a.node[data-node="frontend"]').getAttribute("href")`)
	if u, err := url.Parse(href); err != nil || u.Path != "/traces" || u.Query().Get("service") != "frontend" || u.Query().Get("lookback") != "1h" {
		t.Errorf("frontend's node links %q, want /traces?service=frontend&lookback=1h", href)
	}
	tab.clickToLoad(`.service-map a.node[data-node="frontend"] rect`)
	tab.waitReady()
	if u := eval[string](tab, `location.pathname + location.search`); !strings.HasPrefix(u, "/traces?") || !strings.Contains(u, "service=frontend") {
		t.Fatalf("the node opened %s", u)
	}
	tab.wait(`document.querySelector('.red-panels:not([hidden])')?.dataset.service === "frontend" &&
		[...document.querySelectorAll('.red-panels .chart')].filter(c => Number(c.dataset.points) > 0).length === 3`, 15*time.Second)
	if n := eval[int](tab, `document.querySelectorAll('.trace-item').length`); n == 0 {
		t.Error("no trace of frontend found")
	}
	tab.timings("traces (frontend)")
	// The panels' map link: the map focused on frontend, its neighbours
	// highlighted.
	tab.clickToLoad(`.red-panels a.map-link`)
	tab.waitReady()
	if u := eval[string](tab, `location.search`); !strings.Contains(u, "focus=frontend") || !strings.Contains(u, "range=1h") {
		t.Errorf("the map link opened %s", u)
	}
	if hi := eval[[]string](tab, `[...document.querySelectorAll('.service-map.dim .node.hi')].map(n => n.dataset.node).sort()`); !slices.Equal(hi, []string{"backend", "frontend", "user"}) {
		t.Errorf("focus=frontend highlights %q, want backend, frontend and user", hi)
	}
}

// sendGraph posts graphtest's trace, a new trace id each time, to the
// OTLP/HTTP endpoint twice a second until the test ends.
func sendGraph(t *testing.T, endpoint string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
	c := &http.Client{Timeout: 10 * time.Second}
	wg.Go(func() {
		tick := time.NewTicker(500 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			if err := post(ctx, c, "http://"+endpoint+"/v1/traces", graphtest.Trace(byte(i%255+1), time.Now())); err != nil && ctx.Err() == nil {
				t.Errorf("send the trace: %v", err)
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	})
}

func post(ctx context.Context, c *http.Client, u string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("POST %s: %s", u, resp.Status)
	}
	return nil
}
