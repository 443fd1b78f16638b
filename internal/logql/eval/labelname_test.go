package eval

import "testing"

// TestLabelName: attribute keys become Loki label names as the OTLP
// mapping does: every character but letters, digits and '_' becomes '_',
// a leading digit too; a key that is a label name already comes back as
// it is.
func TestLabelName(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		"service_name": "service_name",
		"service.name": "service_name",
		"k8s.pod.name": "k8s_pod_name",
		"http-method":  "http_method",
		"Ok_Name9":     "Ok_Name9",
		"1st":          "_st",
		"é":            "__",
		"a b":          "a_b",
		"_leading":     "_leading",
		"x.1":          "x_1",
	} {
		if got := LabelName(in); got != want {
			t.Errorf("LabelName(%q) = %q, want %q", in, got, want)
		}
	}
}
