package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strconv"
	"time"
)

// How the same OTLP logs look in the two stores, and so how the queries
// are paired:
//
//   - the body is Loki's line and VictoriaLogs' _msg; the record's time
//     (else its observed time) is the time of both;
//   - service.name is wirehouse's service_name stream label and, with
//     _stream_fields=service.name at ingestion, VictoriaLogs' one stream
//     field: {service_name="x"} and {service.name="x"} select the same;
//   - record and resource attributes are wirehouse's structured metadata,
//     named with "_" for "." (app.customer.tier is app_customer_tier), and
//     VictoriaLogs' fields under their own names; severity_text is both;
//   - LogQL's |= matches a substring, LogsQL's word and phrase filters
//     whole words (VictoriaLogs' "LogQL to LogsQL" guide pairs them): the
//     needles are chosen so that both select the same lines here, and the
//     answers are checked;
//   - a line query returns the newest --limit lines on both (Loki's
//     direction=backward, VictoriaLogs' limit: sort by _time desc); lines
//     tied at the time where both cut are left out of the comparison;
//   - a Loki metric point at t counts (t-step, t]; a LogsQL bucket at T
//     counts [T, T+step): the point at t is compared with the bucket at
//     t-step, over whole steps, so only a record at an exact step
//     boundary could fall apart; empty buckets (VictoriaLogs' hits fills
//     them with 0) are left out;
//   - topk ties at the smallest count may pick other services: there
//     only the counts are compared;
//   - a log query's end is inclusive in wirehouse, exclusive in
//     VictoriaLogs: --end lies after every record.

// logQueries is the logs query set over the data between f.start and
// f.end, asked of ours first to find a rare token in the data.
func logQueries(ctx context.Context, ours *server, f compareFlags, stderr io.Writer) ([]query, error) {
	rare, err := findRareToken(ctx, ours, f)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(stderr, "readcompare: the rare token is %s, a session key of %s\n", rare, f.service)
	sel := fmt.Sprintf("{service_name=%q}", f.service)
	psel := fmt.Sprintf("{service.name=%q}", f.service)
	const all = `{service_name=~".+"}`
	type needle struct {
		name       string
		ours, peer string // filters after the stream selector
	}
	needles := []needle{
		{name: "rare token " + rare, ours: fmt.Sprintf("|= %q", rare), peer: strconv.Quote(rare)},
		{name: "frequent token exhausted", ours: `|= "exhausted"`, peer: `"exhausted"`},
		{name: `phrase "deadline exceeded"`, ours: `|= "deadline exceeded"`, peer: `"deadline exceeded"`},
		{name: "regex status=5[0-9][0-9]", ours: `|~ "status=5[0-9][0-9]"`, peer: `~"status=5[0-9][0-9]"`},
		{name: "attributes tier=enterprise, status 503", ours: `| app_customer_tier="enterprise" | http_response_status_code="503"`,
			peer: `app.customer.tier:=enterprise http.response.status_code:=503`},
	}
	var qs []query
	for _, n := range needles {
		for _, one := range []bool{false, true} {
			name, o, p := n.name+", all services", all+" "+n.ours, n.peer
			if one {
				name, o, p = n.name+", service "+f.service, sel+" "+n.ours, psel+" "+n.peer
			}
			qs = append(qs, lineQuery(name, o, p, f))
		}
	}
	minute := f.end.Add(time.Minute - 1).Truncate(time.Minute)
	five := f.end.Add(5*time.Minute - 1).Truncate(5 * time.Minute)
	qs = append(qs,
		volumeQuery("volume by level, 30 min, 1m steps", all, "*", minute.Add(-30*time.Minute), minute, time.Minute),
		volumeQuery("volume by level, service "+f.service+", 30 min, 1m steps", sel, psel, minute.Add(-30*time.Minute), minute, time.Minute),
		countByServiceQuery("count by service, 30 min, 1m steps", minute.Add(-30*time.Minute), minute, time.Minute),
		countByServiceQuery("count by service, 6 h, 5m steps", five.Add(-6*time.Hour), five, 5*time.Minute),
		topkQuery(minute.Add(-30*time.Minute), minute),
	)
	return qs, nil
}

// rareTokenRE finds the 8 hex digits of a "cache miss for key
// session:<hex>, fetching from db" line: a token one line holds.
var rareTokenRE = regexp.MustCompile(`session:([0-9a-f]{8}),`)

// findRareToken returns a token that one line of the data holds: the
// session key of a cache miss of f.service from the middle of the range.
func findRareToken(ctx context.Context, ours *server, f compareFlags) (string, error) {
	mid := f.start.Add(f.end.Sub(f.start) / 2)
	c := call{path: "/loki/api/v1/query_range", params: url.Values{
		"query": {fmt.Sprintf(`{service_name=%q} |= "cache miss for key session:"`, f.service)},
		"start": {rfc3339(mid)}, "end": {rfc3339(f.end)}, "limit": {"1"}, "direction": {"forward"},
	}, norm: lokiLines}
	body, _, err := ours.get(ctx, c)
	if err != nil {
		return "", err
	}
	a, err := lokiLines(body)
	if err != nil {
		return "", err
	}
	for _, it := range a.items {
		if m := rareTokenRE.FindStringSubmatch(it); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("no cache-miss line of service %s after %s to take a rare token from", f.service, rfc3339(mid))
}

// lineQuery asks for the newest f.limit lines over the whole range.
func lineQuery(name, logql, logsql string, f compareFlags) query {
	lim := strconv.Itoa(f.limit)
	return query{
		name: name, unit: "lines",
		ours: []call{{path: "/loki/api/v1/query_range", norm: lokiLines, params: url.Values{
			"query": {logql}, "start": {rfc3339(f.start)}, "end": {rfc3339(f.end)}, "limit": {lim}, "direction": {"backward"}}}},
		peer: []call{{path: "/select/logsql/query", norm: logsqlLines, params: url.Values{
			"query": {logsql}, "start": {rfc3339(f.start)}, "end": {rfc3339(f.end)}, "limit": {lim}}}},
		trim: func(a, b answer) (answer, answer) { return trimLimitTies(a, b, f.limit) },
	}
}

// volumeQuery counts lines by severity_text per step over [from, to),
// from and to whole steps: Loki's sum by count_over_time against
// VictoriaLogs' hits grouped by the field.
func volumeQuery(name, sel, psel string, from, to time.Time, step time.Duration) query {
	return query{
		name: name, unit: "points",
		ours: []call{{path: "/loki/api/v1/query_range", norm: lokiMatrix("severity_text", step), params: url.Values{
			"query": {fmt.Sprintf("sum by (severity_text) (count_over_time(%s[%s]))", sel, promDuration(step))},
			"start": {rfc3339(from.Add(step))}, "end": {rfc3339(to)}, "step": {promDuration(step)}}}},
		peer: []call{{path: "/select/logsql/hits", norm: logsqlHits("severity_text"), params: url.Values{
			"query": {psel}, "start": {rfc3339(from)}, "end": {rfc3339(to)}, "step": {promDuration(step)}, "field": {"severity_text"}}}},
	}
}

// countByServiceQuery counts lines by service per step over [from, to):
// Loki's sum by count_over_time against VictoriaLogs' stats_query_range.
func countByServiceQuery(name string, from, to time.Time, step time.Duration) query {
	return query{
		name: name, unit: "points",
		ours: []call{{path: "/loki/api/v1/query_range", norm: lokiMatrix("service_name", step), params: url.Values{
			"query": {fmt.Sprintf(`sum by (service_name) (count_over_time({service_name=~".+"}[%s]))`, promDuration(step))},
			"start": {rfc3339(from.Add(step))}, "end": {rfc3339(to)}, "step": {promDuration(step)}}}},
		peer: []call{{path: "/select/logsql/stats_query_range", norm: promMatrix("service.name"), params: url.Values{
			"query": {"* | stats by (service.name) count() hits"},
			"start": {rfc3339(from)}, "end": {rfc3339(to)}, "step": {promDuration(step)}}}},
	}
}

// topkQuery asks for the three services with the most "deadline
// exceeded" lines over [from, to): Loki's instant topk against
// VictoriaLogs' stats_query sorted and limited.
func topkQuery(from, to time.Time) query {
	return query{
		name: `topk 3 services by "deadline exceeded", 30 min`, unit: "services",
		ours: []call{{path: "/loki/api/v1/query", norm: lokiVector("service_name"), params: url.Values{
			"query": {fmt.Sprintf(`topk(3, sum by (service_name) (count_over_time({service_name=~".+"} |= "deadline exceeded" [%s])))`, promDuration(to.Sub(from)))},
			"time":  {rfc3339(to)}}}},
		peer: []call{{path: "/select/logsql/stats_query", norm: promVector("service.name"), params: url.Values{
			"query": {`"deadline exceeded" | stats by (service.name) count() hits | sort by (hits desc) limit 3`},
			"start": {rfc3339(from)}, "end": {rfc3339(to)}}}},
		trim: trimTopkTies,
	}
}

// lokiLines normalizes a Loki streams answer to "time<TAB>line" items.
func lokiLines(body []byte) (answer, error) {
	var r struct {
		Data struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Values [][2]string `json:"values"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return answer{}, err
	}
	if r.Data.ResultType != "streams" {
		return answer{}, fmt.Errorf("resultType %q, want streams", r.Data.ResultType)
	}
	var a answer
	for _, s := range r.Data.Result {
		for _, v := range s.Values {
			a.items = append(a.items, v[0]+"\t"+v[1])
		}
	}
	return sorted(a, len(a.items)), nil
}

// logsqlLines normalizes VictoriaLogs' JSON lines to "time<TAB>line"
// items, the time in ns as Loki gives it.
func logsqlLines(body []byte) (answer, error) {
	var a answer
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		var row struct {
			Time string `json:"_time"`
			Msg  string `json:"_msg"`
		}
		if err := dec.Decode(&row); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return answer{}, err
		}
		t, err := time.Parse(time.RFC3339Nano, row.Time)
		if err != nil {
			return answer{}, fmt.Errorf("_time: %w", err)
		}
		a.items = append(a.items, strconv.FormatInt(t.UnixNano(), 10)+"\t"+row.Msg)
	}
	return sorted(a, len(a.items)), nil
}

// lokiMatrix normalizes a Loki matrix to "label<TAB>bucket ms<TAB>count"
// items, a point at t being the bucket that starts at t-step.
func lokiMatrix(label string, step time.Duration) func([]byte) (answer, error) {
	return func(body []byte) (answer, error) {
		res, err := promResult(body, "matrix")
		if err != nil {
			return answer{}, err
		}
		var a answer
		for _, s := range res {
			for _, p := range s.Values {
				ms, v, err := promPoint(p)
				if err != nil {
					return answer{}, err
				}
				if v != "0" {
					a.items = append(a.items, fmt.Sprintf("%s\t%d\t%s", s.Metric[label], ms-step.Milliseconds(), v))
				}
			}
		}
		return sorted(a, len(a.items)), nil
	}
}

// promMatrix normalizes a Prometheus-style matrix (VictoriaLogs'
// stats_query_range) to "label<TAB>bucket ms<TAB>count" items: a Loki
// matrix whose buckets start at their point's time.
func promMatrix(label string) func([]byte) (answer, error) { return lokiMatrix(label, 0) }

// lokiVector normalizes an instant vector to "label<TAB>count" items.
func lokiVector(label string) func([]byte) (answer, error) {
	return func(body []byte) (answer, error) {
		res, err := promResult(body, "vector")
		if err != nil {
			return answer{}, err
		}
		var a answer
		for _, s := range res {
			_, v, err := promPoint(s.Value)
			if err != nil {
				return answer{}, err
			}
			a.items = append(a.items, s.Metric[label]+"\t"+v)
		}
		return sorted(a, len(a.items)), nil
	}
}

// promVector is lokiVector for VictoriaLogs' stats_query, which answers
// in the same shape.
func promVector(label string) func([]byte) (answer, error) { return lokiVector(label) }

// logsqlHits normalizes VictoriaLogs' hits grouped by field to
// "value<TAB>bucket ms<TAB>count" items, the empty buckets left out.
func logsqlHits(field string) func([]byte) (answer, error) {
	return func(body []byte) (answer, error) {
		var r struct {
			Hits []struct {
				Fields     map[string]string `json:"fields"`
				Timestamps []string          `json:"timestamps"`
				Values     []int64           `json:"values"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(body, &r); err != nil {
			return answer{}, err
		}
		var a answer
		for _, h := range r.Hits {
			if len(h.Timestamps) != len(h.Values) {
				return answer{}, fmt.Errorf("hits: %d timestamps, %d values", len(h.Timestamps), len(h.Values))
			}
			for i, ts := range h.Timestamps {
				t, err := time.Parse(time.RFC3339Nano, ts)
				if err != nil {
					return answer{}, err
				}
				if h.Values[i] != 0 {
					a.items = append(a.items, fmt.Sprintf("%s\t%d\t%d", h.Fields[field], t.UnixMilli(), h.Values[i]))
				}
			}
		}
		return sorted(a, len(a.items)), nil
	}
}

// promSeries is a series of a Prometheus-style answer (Loki's and
// VictoriaLogs' stats endpoints alike).
type promSeries struct {
	Metric map[string]string `json:"metric"`
	Values [][2]any          `json:"values"`
	Value  [2]any            `json:"value"`
}

// promResult decodes a Prometheus-style answer of result type want.
func promResult(body []byte, want string) ([]promSeries, error) {
	var r struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string       `json:"resultType"`
			Result     []promSeries `json:"result"`
		} `json:"data"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&r); err != nil {
		return nil, err
	}
	if r.Data.ResultType != want {
		return nil, fmt.Errorf("resultType %q, want %s", r.Data.ResultType, want)
	}
	return r.Data.Result, nil
}

// promPoint reads a [seconds, "value"] pair: the time in ms and the
// value's text.
func promPoint(p [2]any) (int64, string, error) {
	n, ok := p[0].(json.Number)
	v, vok := p[1].(string)
	if !ok || !vok {
		return 0, "", fmt.Errorf("point %v: want [seconds, \"value\"]", p)
	}
	secs, err := n.Float64()
	if err != nil {
		return 0, "", err
	}
	return int64(secs*1000 + 0.5), v, nil
}

// trimLimitTies drops the lines at the oldest time of two answers that
// both stopped at the limit at that same time: which of the lines tied
// there make the cut is either store's choice.
func trimLimitTies(a, b answer, limit int) (answer, answer) {
	if len(a.items) < limit || len(b.items) < limit {
		return a, b
	}
	ta, tb := oldest(a), oldest(b)
	if ta != tb {
		return a, b
	}
	drop := func(x answer) answer {
		var out []string
		for _, it := range x.items {
			if lineTime(it) != ta {
				out = append(out, it)
			}
		}
		return answer{items: out, size: x.size}
	}
	return drop(a), drop(b)
}

// oldest is the smallest time of an answer's "time<TAB>line" items.
func oldest(a answer) int64 {
	m := int64(0)
	for i, it := range a.items {
		if t := lineTime(it); i == 0 || t < m {
			m = t
		}
	}
	return m
}

// lineTime is the time of a "time<TAB>line" item.
func lineTime(it string) int64 {
	for i := 0; i < len(it); i++ {
		if it[i] == '\t' {
			n, _ := strconv.ParseInt(it[:i], 10, 64)
			return n
		}
	}
	return 0
}

// trimTopkTies compares two topk answers ("label<TAB>count") by their
// counts, and by their labels only above the smallest count, where a tie
// may let either store pick another label.
func trimTopkTies(a, b answer) (answer, answer) {
	low := func(x answer) int64 {
		m := int64(-1)
		for _, it := range x.items {
			if n := topkCount(it); m < 0 || n < m {
				m = n
			}
		}
		return m
	}
	la, lb := low(a), low(b)
	if la != lb {
		return a, b
	}
	norm := func(x answer) answer {
		var out []string
		for _, it := range x.items {
			if topkCount(it) == la {
				it = "(tied)\t" + strconv.FormatInt(la, 10)
			}
			out = append(out, it)
		}
		return sorted(answer{items: out}, x.size)
	}
	return norm(a), norm(b)
}

// topkCount is the count of a "label<TAB>count" item.
func topkCount(it string) int64 {
	for i := len(it) - 1; i >= 0; i-- {
		if it[i] == '\t' {
			n, _ := strconv.ParseInt(it[i+1:], 10, 64)
			return n
		}
	}
	return 0
}

// rfc3339 is t as the APIs take it.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// promDuration is d as LogQL and LogsQL write it: 1m, 5m, 30m, 6h.
func promDuration(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}
