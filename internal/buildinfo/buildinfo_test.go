package buildinfo

import (
	"runtime"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestGet(t *testing.T) {
	i := Get()
	if i.Version == "" || i.GoVersion != runtime.Version() || i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Get() = %+v", i)
	}
	if s := i.String(); !strings.HasPrefix(s, "wirehouse "+i.Version+" (revision ") || !strings.Contains(s, runtime.Version()) {
		t.Errorf("String() = %q", s)
	}
}

func TestCollector(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(Collector())
	i := Get()
	want := `# HELP wirehouse_build_info A metric with a constant '1' value labeled by the version, revision and Go version wirehouse was built from.
# TYPE wirehouse_build_info gauge
wirehouse_build_info{goarch="` + runtime.GOARCH + `",goos="` + runtime.GOOS + `",goversion="` + i.GoVersion + `",revision="` + i.Revision + `",version="` + i.Version + `"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
