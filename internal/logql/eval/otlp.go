package eval

import (
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/internal/lokipush"
)

// How OTLP log records become Loki streams, as Loki 3's native OTLP
// ingestion maps them (its documented defaults):
//
//   - the resource attributes of indexKeys are index labels (the stream),
//     with service_name always there (unknown_service without one);
//   - the other resource attributes, the record's attributes, the scope's
//     name and version, severity_text and severity_number, trace_id and
//     span_id are structured metadata, as is detected_level (the level
//     Loki derives from the severity);
//   - names have every character outside [a-zA-Z0-9_] replaced by "_"
//     (service.name is service_name);
//   - the body is the line.
//
// A resource's loki.resource.labels hint (the Collector's Loki exporter's;
// every record pushed through Loki's push API carries it,
// internal/lokipush) names more resource attributes that are index
// labels: a pushed stream reads back as the stream it was. The hint
// itself is no label.
//
// Stream selectors match index labels and structured metadata alike (so
// {detected_level="error"} and {scope_name="x"} select too); a selector on
// level, as Grafana names the level, matches detected_level unless a
// record has a level label of its own.

// indexKeys are the resource attributes Loki 3 indexes by default.
var indexKeys = map[string]bool{
	"cloud.availability_zone": true, "cloud.region": true, "container.name": true,
	"deployment.environment": true, "deployment.environment.name": true,
	"k8s.cluster.name": true, "k8s.container.name": true, "k8s.cronjob.name": true, "k8s.daemonset.name": true,
	"k8s.deployment.name": true, "k8s.job.name": true, "k8s.namespace.name": true, "k8s.pod.name": true,
	"k8s.replicaset.name": true, "k8s.statefulset.name": true,
	"service.instance.id": true, "service.name": true, "service.namespace": true,
}

// LabelName is an attribute key as a Loki label name.
func LabelName(k string) string {
	if labelNameAsIs(k) {
		return k // most keys: no copy
	}
	b := []byte(k)
	for i, c := range b {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			b[i] = '_'
		}
	}
	if len(b) > 0 && b[0] >= '0' && b[0] <= '9' {
		return "_" + string(b)
	}
	return string(b)
}

// labelNameAsIs reports whether k is a label name as it is.
func labelNameAsIs(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' && i > 0) {
			return false
		}
	}
	return true
}

// hinted returns the value of r's loki.resource.labels hint (the
// resource attributes that are index labels, comma-separated: what the
// Collector's Loki exporter reads, and what a Loki push's records carry,
// internal/lokipush), "" if it has none.
func hinted(r *Record) string {
	for _, kv := range r.Resource {
		if kv.Key == lokipush.LabelsHintKey {
			return kv.Value
		}
	}
	return ""
}

// indexed reports whether resource attribute k of r is an index label:
// one of indexKeys, or one the hint names; the hint itself is no label.
func indexed(r *Record, k, hint string) bool {
	if hint == "" || k == lokipush.LabelsHintKey {
		return indexKeys[k]
	}
	for rest := hint; rest != ""; {
		var name string
		name, rest, _ = strings.Cut(rest, ",")
		if name == k {
			return true
		}
	}
	return indexKeys[k]
}

// streamLabels are a record's index labels.
func streamLabels(r *Record) Labels {
	out := []Label{{"service_name", r.Service}}
	hint := hinted(r)
	for _, kv := range r.Resource {
		if indexed(r, kv.Key, hint) && kv.Key != "service.name" {
			out = append(out, Label{LabelName(kv.Key), kv.Value})
		}
	}
	return labelsOf(out)
}

// metadata is a record's structured metadata.
func metadata(r *Record) Labels {
	var out []Label
	for _, kv := range r.Attrs {
		out = append(out, Label{LabelName(kv.Key), kv.Value})
	}
	hint := hinted(r)
	for _, kv := range r.Resource {
		if kv.Key != lokipush.LabelsHintKey && !indexed(r, kv.Key, hint) {
			out = append(out, Label{LabelName(kv.Key), kv.Value})
		}
	}
	add := func(name, v string) {
		if v != "" {
			out = append(out, Label{name, v})
		}
	}
	add("scope_name", r.ScopeName)
	add("scope_version", r.ScopeVersion)
	add("severity_text", r.SeverityText)
	if r.SeverityNumber != 0 {
		add("severity_number", strconv.Itoa(int(r.SeverityNumber)))
	}
	add("trace_id", r.TraceID)
	add("span_id", r.SpanID)
	add("detected_level", detectedLevel(r))
	return labelsOf(out)
}

// recordLabel is the value of label name of a record, as the labels of
// each would give it: index labels, then the record's attributes, then
// the other resource attributes, then scope, severity and ids.
func recordLabel(r *Record, name string) (string, bool) {
	if name == "service_name" {
		return r.Service, true
	}
	hint := hinted(r)
	for _, kv := range r.Resource {
		if indexed(r, kv.Key, hint) && LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	for _, kv := range r.Attrs {
		if LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	for _, kv := range r.Resource {
		if kv.Key != lokipush.LabelsHintKey && !indexed(r, kv.Key, hint) && LabelName(kv.Key) == name {
			return kv.Value, true
		}
	}
	switch name {
	case "scope_name":
		return r.ScopeName, r.ScopeName != ""
	case "scope_version":
		return r.ScopeVersion, r.ScopeVersion != ""
	case "severity_text":
		return r.SeverityText, r.SeverityText != ""
	case "severity_number":
		return strconv.Itoa(int(r.SeverityNumber)), r.SeverityNumber != 0
	case "trace_id":
		return r.TraceID, r.TraceID != ""
	case "span_id":
		return r.SpanID, r.SpanID != ""
	case "detected_level":
		return detectedLevel(r), true
	}
	return "", false
}

// detectedLevel is the level Loki derives from an OTLP record: its
// severity number's range, else its severity text lowercased, else
// "unknown".
func detectedLevel(r *Record) string {
	switch n := r.SeverityNumber; {
	case n >= 1 && n <= 4:
		return "trace"
	case n >= 5 && n <= 8:
		return "debug"
	case n >= 9 && n <= 12:
		return "info"
	case n >= 13 && n <= 16:
		return "warn"
	case n >= 17 && n <= 20:
		return "error"
	case n >= 21 && n <= 24:
		return "fatal"
	}
	if r.SeverityText != "" {
		return strings.ToLower(r.SeverityText)
	}
	return "unknown"
}
