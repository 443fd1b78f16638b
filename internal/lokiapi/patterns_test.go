package lokiapi_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
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

// pyPatternCounts counts, for each pattern, the lines it matches (its
// words, <_> any word, separated by white space), in Python.
const pyPatternCounts = `
import json, re, sys
d = json.load(sys.stdin)
out = {}
for p in d["patterns"]:
    rx = re.compile(r"\s+".join(r"\S+" if w == "<_>" else re.escape(w) for w in p.split(" ")))
    out[p] = sum(1 for l in d["lines"] if rx.fullmatch(l.strip()))
print(json.dumps(out))
`

// TestPatterns: /patterns over lines made from three templates gives the
// three templates with <_> for their variable words, each counted a step,
// and Python counts the same lines for each pattern over the same lines.
func TestPatterns(t *testing.T) {
	at := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)
	rnd := rand.New(rand.NewPCG(3, 4))
	makers := map[string]func() string{
		"user <_> logged in from <_>": func() string {
			return fmt.Sprintf("user %s logged in from 10.1.%d.%d", []string{"ann", "bob", "cid"}[rnd.IntN(3)], rnd.IntN(256), rnd.IntN(256))
		},
		"GET <_> OK <_>":         func() string { return fmt.Sprintf("GET /items/%d OK %dms", rnd.IntN(100), rnd.IntN(900)) },
		"cache miss for key <_>": func() string { return fmt.Sprintf("cache miss for key k%x", rnd.Uint32()) },
	}
	names := slices.Sorted(maps.Keys(makers))
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "api")
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	var lines []string
	want := map[string]int64{}
	for i := range 600 {
		name := names[rnd.IntN(len(names))]
		line := makers[name]()
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.NewTimestampFromTime(at.Add(time.Duration(i) * time.Second)))
		lr.Body().SetStr(line)
		lines = append(lines, line)
		want[name]++
	}
	body, err := plogotlp.NewExportRequestFromLogs(ld).MarshalProto()
	if err != nil {
		t.Fatal(err)
	}
	base, _ := lokiServer(t, body)
	params := window(at, at.Add(time.Hour))
	params.Set("query", `{service_name="api"}`)
	params.Set("step", "60s")
	var got struct {
		Status string `json:"status"`
		Data   []struct {
			Pattern string     `json:"pattern"`
			Samples [][2]int64 `json:"samples"`
		} `json:"data"`
	}
	if code, b := get(t, base, "/loki/api/v1/patterns", params, &got); code != http.StatusOK || got.Status != "success" {
		t.Fatalf("patterns: %d %s", code, b)
	}
	totals := map[string]int64{}
	var patterns []string
	for i, p := range got.Data {
		for _, s := range p.Samples {
			if (s[0]-at.Unix())%60 != 0 || s[1] <= 0 {
				t.Errorf("%s: sample %v off the 60 s grid", p.Pattern, s)
			}
			totals[p.Pattern] += s[1]
		}
		if i > 0 && totals[p.Pattern] > totals[got.Data[i-1].Pattern] {
			t.Errorf("%s after a less frequent pattern", p.Pattern)
		}
		patterns = append(patterns, p.Pattern)
	}
	if fmt.Sprint(totals) != fmt.Sprint(want) {
		t.Errorf("patterns\n got  %v\n want %v", totals, want)
	}
	python := os.Getenv("WIREHOUSE_PYTHON")
	if python == "" {
		t.Skip("WIREHOUSE_PYTHON not set: the counts are not checked by Python")
	}
	in, _ := json.Marshal(map[string]any{"patterns": patterns, "lines": lines})
	cmd := exec.Command(python, "-c", pyPatternCounts)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	var py map[string]int64
	if err := json.Unmarshal(out, &py); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(py) != fmt.Sprint(totals) {
		t.Errorf("Python counts %v, the API %v", py, totals)
	}
}
