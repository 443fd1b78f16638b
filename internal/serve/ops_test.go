package serve

import (
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/buildinfo"
	"github.com/wirehouse/wirehouse/internal/promapi"
)

// TestBuildInfo: /metrics has wirehouse_build_info and buildinfo reports
// wirehouse's version, with the engine's Prometheus version beside it.
func TestBuildInfo(t *testing.T) {
	s := startServer(t, testConfig(t))
	admin := "http://" + s.Addrs().Admin.String()
	bi := buildinfo.Get()
	_, metrics := get(t, admin+"/metrics")
	if want := `wirehouse_build_info{goarch=`; !strings.Contains(metrics, want) || !strings.Contains(metrics, `version="`+bi.Version+`"} 1`) {
		t.Errorf("/metrics lacks wirehouse_build_info:\n%s", grep(metrics, "build_info"))
	}
	code, body := get(t, admin+"/api/v1/status/buildinfo")
	var resp struct {
		Status string            `json:"status"`
		Data   map[string]string `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || code != 200 {
		t.Fatalf("buildinfo: %d %s", code, body)
	}
	if d := resp.Data; d["version"] != bi.Version || d["application"] != "wirehouse" || d["prometheusVersion"] != promapi.PrometheusVersion || d["goVersion"] != bi.GoVersion {
		t.Errorf("buildinfo data %v", d)
	}
}

// TestPprofOff: /debug/pprof/ is not served unless asked for.
func TestPprofOff(t *testing.T) {
	s := startServer(t, testConfig(t))
	if code, _ := get(t, "http://"+s.Addrs().Admin.String()+"/debug/pprof/cmdline"); code != 404 {
		t.Errorf("pprof without admin.pprof: %d, want 404", code)
	}
	cfg := testConfig(t)
	cfg.Admin.Pprof = true
	s = startServer(t, cfg)
	if code, _ := get(t, "http://"+s.Addrs().Admin.String()+"/debug/pprof/cmdline"); code != 200 {
		t.Errorf("pprof with admin.pprof: %d, want 200", code)
	}
}

// TestDataDirInUse: a second server on a data directory in use says so,
// with the PID of the holder, and opens nothing.
func TestDataDirInUse(t *testing.T) {
	cfg := testConfig(t)
	startServer(t, cfg)
	_, err := New(cfg, io.Discard)
	want := "data directory " + cfg.DataDir + " is in use by another process (pid " + strconv.Itoa(os.Getpid()) + ")"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("second server: %v, want %q", err, want)
	}
}
