package main

import (
	"testing"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestRequest: a request is valid OTLP with the spans asked for, each
// named anew, continuing the count.
func TestRequest(t *testing.T) {
	n := 7
	req := otlpwire.TracesRequest(request(0, 3, &n))
	if err := req.Validate(); err != nil {
		t.Fatal(err)
	}
	var names []string
	for rs, err := range req.ResourceSpans() {
		if err != nil {
			t.Fatal(err)
		}
		for ss := range rs.ScopeSpans() {
			for sp := range ss.Spans() {
				var f otlpwire.SpanFields
				if err := sp.Read(&f); err != nil {
					t.Fatal(err)
				}
				names = append(names, string(f.Name))
			}
		}
	}
	if n != 10 || len(names) != 3 || names[0] != "GET /item/7" || names[2] != "GET /item/9" {
		t.Errorf("names %v, count %d", names, n)
	}
}
