package eval

import (
	"maps"
	"testing"
)

// TestLabelsHint: a resource's loki.resource.labels names more index
// labels (as a Loki push's records carry it); the others stay structured
// metadata, and the hint is no label.
func TestLabelsHint(t *testing.T) {
	r := &Record{Service: "api", Resource: []KV{{"job", "x"}, {"env", "dev"}, {"k8s.pod.name", "p"},
		{"service.name", "api"}, {"loki.resource.labels", "job,service.name"}}, Attrs: []KV{{"user", "ann"}}}
	if got, want := streamLabels(r).Map(), map[string]string{"service_name": "api", "job": "x", "k8s_pod_name": "p"}; !maps.Equal(got, want) {
		t.Errorf("stream labels %v, want %v", got, want)
	}
	md := metadata(r).Map()
	if md["env"] != "dev" || md["user"] != "ann" || md["job"] != "" || md["loki_resource_labels"] != "" {
		t.Errorf("metadata %v: want env and user, not job or the hint", md)
	}
	if v, ok := recordLabel(r, "job"); !ok || v != "x" {
		t.Errorf("recordLabel job = %q %v", v, ok)
	}
	if _, ok := recordLabel(r, "loki_resource_labels"); ok {
		t.Error("the hint is a label")
	}
	// Without the hint, job is metadata, as Loki 3 maps OTLP.
	r.Resource = r.Resource[:4]
	if got := streamLabels(r).Map(); got["job"] != "" {
		t.Errorf("no hint: stream labels %v", got)
	}
}
