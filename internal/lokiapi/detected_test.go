package lokiapi_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
)

// detectedLines are the fixture: logfmt, JSON and plain lines, each with
// the record attribute user (structured metadata).
var detectedLines = []struct{ line, user string }{
	{`level=info msg="request done" duration=15ms size=10KB status=200 ok=true`, "ann"},
	{`level=warn msg=slow duration=1.5s size=2MiB status=503 ok=false ratio=0.5`, "bob"},
	{`{"level":"error","request":{"method":"GET","path":"/a"},"latency_ms":12.5,"user":"x"}`, "ann"},
	{`{"level":"info","request":{"method":"POST","path":"/b"},"latency_ms":7,"tags":["a"]}`, "cid"},
	{`just some words here`, "ann"},
}

// pyDetected computes the detected fields of detectedLines in Python, on
// its own: structured metadata (user, and detected_level, which a record
// without severity has as "unknown"), JSON objects flattened with "_",
// logfmt pairs by a regular expression, types by the rule Loki documents
// (int, float, boolean, duration, bytes, else string).
const pyDetected = `
import json, re, sys
lines = json.load(sys.stdin)
fields = {}
def add(name, parser, v):
    f = fields.setdefault(name, {"parsers": set(), "values": set()})
    if parser: f["parsers"].add(parser)
    f["values"].add(v)
def leaves(prefix, obj):
    for k, v in obj.items():
        name = re.sub(r"[^a-zA-Z0-9_]", "_", k)
        name = prefix + "_" + name if prefix else name
        if isinstance(v, dict): yield from leaves(name, v)
        elif isinstance(v, bool): yield name, "true" if v else "false"
        elif isinstance(v, (int, float)): yield name, ("%d" % v) if float(v).is_integer() else repr(float(v))
        elif isinstance(v, str): yield name, v
for l in lines:
    md = {"user": l["user"], "detected_level": "unknown"}
    for k, v in md.items(): add(k, None, v)
    taken = set(md) | {"service_name"}
    try:
        obj = json.loads(l["line"])
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        for name, v in leaves("", obj):
            add(name + "_extracted" if name in taken else name, "json", v)
        continue
    for k, v in re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)=("(?:[^"\\]|\\.)*"|[^ \t]+)', l["line"]):
        if v.startswith('"'): v = json.loads(v)
        if v: add(k + "_extracted" if k in taken else k, "logfmt", v)
def typ(vs):
    def all_(p): return all(p(v) for v in vs)
    def isint(v): return re.fullmatch(r"[+-]?\d+", v) is not None
    def isfloat(v):
        try: float(v); return True
        except ValueError: return False
    if all_(isint): return "int"
    if all_(isfloat): return "float"
    if all_(lambda v: v.lower() in ("true", "false")): return "boolean"
    if all_(lambda v: re.fullmatch(r"([0-9]*\.?[0-9]+(ns|us|µs|ms|s|m|h))+", v)): return "duration"
    if all_(lambda v: re.fullmatch(r"[0-9]*\.?[0-9]+(B|kB|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", v)): return "bytes"
    return "string"
print(json.dumps({n: {"type": typ(f["values"]), "cardinality": len(f["values"]), "parsers": sorted(f["parsers"]) or None,
                      "values": sorted(f["values"])} for n, f in fields.items()}, sort_keys=True))
`

// TestDetectedFields: detected_fields and detected_field values over a
// fixture of logfmt, JSON and plain lines equal what Python computes of
// the same lines (names, types, cardinalities, parsers, values); JSON
// fields carry their path; detected_labels lists the stream labels.
func TestDetectedFields(t *testing.T) {
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set; `make test` installs a venv and sets it")
	}
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "api")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	var in []map[string]string
	for i, l := range detectedLines {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(i) * time.Second)))
		lr.Body().SetStr(l.line)
		lr.Attributes().PutStr("user", l.user)
		in = append(in, map[string]string{"line": l.line, "user": l.user})
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := lokiServer(t, body)
	js, _ := json.Marshal(in)
	cmd := exec.Command(python, "-c", pyDetected)
	cmd.Stdin = strings.NewReader(string(js))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	type field struct {
		Type        string   `json:"type"`
		Cardinality int      `json:"cardinality"`
		Parsers     []string `json:"parsers"`
		Values      []string `json:"values"`
	}
	var want map[string]field
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	params := window(at.Add(-time.Minute), at.Add(time.Minute))
	params.Set("query", `{service_name="api"}`)
	var got struct {
		Fields []struct {
			Label       string   `json:"label"`
			Type        string   `json:"type"`
			Cardinality int      `json:"cardinality"`
			Parsers     []string `json:"parsers"`
			JSONPath    []string `json:"jsonPath"`
		} `json:"fields"`
		Limit int `json:"limit"`
	}
	if code, b := get(t, base, "/loki/api/v1/detected_fields", params, &got); code != http.StatusOK || got.Limit != 1000 {
		t.Fatalf("detected_fields: %d %s", code, b)
	}
	if len(got.Fields) != len(want) {
		t.Errorf("%d fields, Python's %d: %+v", len(got.Fields), len(want), got.Fields)
	}
	for _, f := range got.Fields {
		w, ok := want[f.Label]
		if !ok || f.Type != w.Type || f.Cardinality != w.Cardinality || !slices.Equal(f.Parsers, w.Parsers) {
			t.Errorf("field %+v, Python's %+v", f, w)
		}
		if f.Label == "request_method" && !slices.Equal(f.JSONPath, []string{"request", "method"}) {
			t.Errorf("request_method's path %v", f.JSONPath)
		}
		var vals struct {
			Values []string `json:"values"`
		}
		get(t, base, "/loki/api/v1/detected_field/"+url.PathEscape(f.Label)+"/values", params, &vals)
		if !slices.Equal(vals.Values, w.Values) {
			t.Errorf("values of %s: %v, Python's %v", f.Label, vals.Values, w.Values)
		}
	}
	var labels struct {
		DetectedLabels []struct {
			Label       string `json:"label"`
			Cardinality int    `json:"cardinality"`
		} `json:"detectedLabels"`
	}
	if code, b := get(t, base, "/loki/api/v1/detected_labels", params, &labels); code != http.StatusOK || len(labels.DetectedLabels) != 1 ||
		labels.DetectedLabels[0].Label != "service_name" || labels.DetectedLabels[0].Cardinality != 1 {
		t.Errorf("detected_labels: %d %s", code, b)
	}
}
