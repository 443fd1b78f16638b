package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// How the same OTLP spans look through the two Jaeger APIs, and so how
// the answers are compared:
//
//   - both answer in Jaeger's JSON model; an answer is normalized to the
//     set of (trace id, span id) of its spans, ids as 32 and 16 lower-case
//     hex digits (Jaeger writes a trace id without its leading zeros);
//   - a search that a limit cuts returns the most recent traces, but the
//     two rank them differently: Badger by the start of the trace's
//     latest span of the service (µs), wirehouse (lakeread.FindTraces) by
//     the end of its latest matching span. So every search here asks for
//     up to 1000 traces over a window that holds fewer (the window halved
//     from the one named until wirehouse finds fewer than 1000 for each
//     service), both must answer with every trace of the window, and the
//     order plays no part; an answer of 1000 traces is an error;
//   - the tags searched are ones the data holds once a span: the
//     generator writes some span attributes twice (a server span's
//     http.response.status_code, http.route, ... also among its extra
//     attributes), and Badger indexes each copy where wirehouse matches
//     the first;
//   - a search's end is inclusive in Badger, exclusive in wirehouse:
//     --end lies after every span.

// searchMax is the most traces a search asks for: wirehouse's
// readapi.Limits.MaxTraces, the most its Jaeger API returns.
const searchMax = 1000

// traceQueries is the traces query set over the data between f.start and
// f.end; ours is asked first for the services, for trace ids spread over
// the range and for the windows of the searches.
func traceQueries(ctx context.Context, ours *server, f compareFlags, stderr io.Writer) ([]query, error) {
	svcs, err := ours.services(ctx)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(svcs, f.service) {
		return nil, fmt.Errorf("no service %q in wirehouse's %v", f.service, svcs)
	}
	recentFrom := f.end.Add(-2 * time.Minute)
	if recentFrom.Before(f.start) {
		recentFrom = f.start.Add(f.end.Sub(f.start) / 2)
	}
	older, err := pickTraceIDs(ctx, ours, svcs, f.start, recentFrom, 40)
	if err != nil {
		return nil, err
	}
	recent, err := pickTraceIDs(ctx, ours, svcs, recentFrom, f.end, 10)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "readcompare: %d trace ids before %s, %d after\n", len(older), rfc3339(recentFrom), len(recent))
	// Three services for the searches: --service and the next two.
	i := slices.Index(svcs, f.service)
	three := []string{svcs[i], svcs[(i+1)%len(svcs)], svcs[(i+2)%len(svcs)]}
	qs := []query{
		{name: "services", unit: "services",
			ours: []call{{path: "/jaeger/api/services", norm: jaegerServices}},
			peer: []call{{path: "/api/services", norm: jaegerServices}}},
		byIDQuery(fmt.Sprintf("trace by id, %d ids across the range", len(older)), older),
		byIDQuery(fmt.Sprintf("trace by id, %d ids of the last minutes", len(recent)), recent),
	}
	for _, s := range []struct {
		name string
		tags string
		over time.Duration
	}{
		{"search by service", "", time.Minute},
		{"search by service + resource tag deployment.environment.name=canary", `{"deployment.environment.name":"canary"}`, 5 * time.Minute},
		{"search by service + error=true", `{"error":"true"}`, 5 * time.Minute},
	} {
		from, err := searchWindow(ctx, ours, three, f, s.over, s.tags)
		if err != nil {
			return nil, err
		}
		qs = append(qs, searchQuery(fmt.Sprintf("%s, last %s, every trace (3 services)", s.name, shortDuration(f.end.Sub(from))), three, from, f.end, s.tags))
	}
	return qs, nil
}

// searchWindow is the start of the window ending at f.end, over at most
// the last d (and not before f.start), halved until ours finds fewer than
// searchMax traces of each service with the tags.
func searchWindow(ctx context.Context, ours *server, svcs []string, f compareFlags, d time.Duration, tags string) (time.Time, error) {
	for ; d >= time.Second; d /= 2 {
		from := f.end.Add(-d)
		if from.Before(f.start) {
			from = f.start
		}
		ok := true
		for _, c := range searchQuery("", svcs, from, f.end, tags).ours {
			body, _, err := ours.get(ctx, c)
			if err != nil {
				return time.Time{}, err
			}
			a, err := jaegerSpans(body)
			if err != nil {
				return time.Time{}, err
			}
			if traceCount(a) >= searchMax {
				ok = false
				break
			}
		}
		if ok {
			return from, nil
		}
	}
	return time.Time{}, fmt.Errorf("even the last second holds %d traces of a service (tags %s)", searchMax, tags)
}

// services is the service list of s's Jaeger API, sorted.
func (s *server) services(ctx context.Context) ([]string, error) {
	body, _, err := s.get(ctx, call{path: "/jaeger/api/services"})
	if err != nil {
		return nil, err
	}
	a, err := jaegerServices(body)
	if err != nil {
		return nil, err
	}
	if len(a.items) == 0 {
		return nil, fmt.Errorf("%s has no services", s.name)
	}
	return a.items, nil
}

// pickTraceIDs finds n trace ids spread over [from, to): the most recent
// trace of a service in each of n equal windows, the services taken in
// turn (the next one when a window has none of a service's).
func pickTraceIDs(ctx context.Context, ours *server, svcs []string, from, to time.Time, n int) ([]string, error) {
	var ids []string
	seen := map[string]bool{}
	w := to.Sub(from) / time.Duration(n)
	for i := range n {
		ws, we := from.Add(time.Duration(i)*w), from.Add(time.Duration(i+1)*w)
		for j := range svcs {
			svc := svcs[(i+j)%len(svcs)]
			body, _, err := ours.get(ctx, call{path: "/jaeger/api/traces", params: url.Values{
				"service": {svc}, "start": {micros(ws)}, "end": {micros(we)}, "limit": {"1"}}})
			if err != nil {
				return nil, err
			}
			a, err := jaegerSpans(body)
			if err != nil {
				return nil, err
			}
			if len(a.items) > 0 {
				id, _, _ := strings.Cut(a.items[0], "\t")
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("no traces between %s and %s", rfc3339(from), rfc3339(to))
	}
	return ids, nil
}

// byIDQuery reads each trace of ids whole, without a time range.
func byIDQuery(name string, ids []string) query {
	q := query{name: name, unit: "spans"}
	for _, id := range ids {
		q.ours = append(q.ours, call{path: "/jaeger/api/traces/" + id, norm: jaegerSpans})
		q.peer = append(q.peer, call{path: "/api/traces/" + id, norm: jaegerSpans})
	}
	return q
}

// searchQuery searches the traces of each service over [from, to] with
// the tags (JSON; "" none), up to searchMax: an answer of that many is an
// error, since which traces a limit keeps depends on the store's order.
func searchQuery(name string, svcs []string, from, to time.Time, tags string) query {
	q := query{name: name, unit: "spans"}
	for _, svc := range svcs {
		p := url.Values{"service": {svc}, "start": {micros(from)}, "end": {micros(to)}, "limit": {strconv.Itoa(searchMax)}}
		if tags != "" {
			p.Set("tags", tags)
		}
		q.ours = append(q.ours, call{path: "/jaeger/api/traces", params: p, norm: wholeSearch})
		q.peer = append(q.peer, call{path: "/api/traces", params: p, norm: wholeSearch})
	}
	return q
}

// wholeSearch is jaegerSpans of a search that must hold every trace it
// matched: fewer than searchMax.
func wholeSearch(body []byte) (answer, error) {
	a, err := jaegerSpans(body)
	if err == nil && traceCount(a) >= searchMax {
		err = fmt.Errorf("%d traces: the limit cut the answer, which then depends on the store's order", traceCount(a))
	}
	return a, err
}

// jaegerServices normalizes /api/services to its sorted names.
func jaegerServices(body []byte) (answer, error) {
	var r struct {
		Data []string `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, err
	}
	return sorted(answer{items: r.Data}, len(r.Data)), nil
}

// jaegerSpans normalizes a Jaeger traces answer to "trace id<TAB>span id"
// items, ids padded to 32 and 16 hex digits.
func jaegerSpans(body []byte) (answer, error) {
	var r struct {
		Data []struct {
			TraceID string `json:"traceID"`
			Spans   []struct {
				TraceID string `json:"traceID"`
				SpanID  string `json:"spanID"`
			} `json:"spans"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, err
	}
	var a answer
	for _, t := range r.Data {
		for _, s := range t.Spans {
			a.items = append(a.items, padHex(s.TraceID, 32)+"\t"+padHex(s.SpanID, 16))
		}
	}
	return sorted(a, len(a.items)), nil
}

// traceCount is the distinct traces of a jaegerSpans answer.
func traceCount(a answer) int {
	n, last := 0, ""
	for _, it := range a.items { // sorted: a trace's spans are together
		if id, _, _ := strings.Cut(it, "\t"); id != last {
			n, last = n+1, id
		}
	}
	return n
}

// padHex is id in lower case, left-padded with zeros to n digits.
func padHex(id string, n int) string {
	id = strings.ToLower(id)
	if len(id) < n {
		id = strings.Repeat("0", n-len(id)) + id
	}
	return id
}

// micros is t in µs since the epoch, as Jaeger's search takes it.
func micros(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

// shortDuration is d to the second without zero units: 1m, 2m30s, 1h.
func shortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
