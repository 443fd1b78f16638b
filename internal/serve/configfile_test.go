package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestConfigEnv(t *testing.T) {
	t.Setenv("WH_TEST_DIR", "/srv/wirehouse")
	t.Setenv("WH_TEST_STREAMS", "250")
	t.Setenv("WH_TEST_DELAY", "30s")
	path := filepath.Join(t.TempDir(), "wirehouse.yaml")
	// Block style: in a flow mapping ({...}) the reference's } would end
	// the mapping, as in the Collector's configuration.
	doc := `data_dir: ${env:WH_TEST_DIR}/data
otlp:
  grpc:
    max_concurrent_streams: ${env:WH_TEST_STREAMS}
  http:
    listen: "${env:WH_TEST_UNSET_HOST:-0.0.0.0}:4318"
lake:
  max_delay: ${env:WH_TEST_DELAY}
  tenant: 'price$$'
log:
  level: "${env:WH_TEST_UNSET_LEVEL}info"
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name      string
		got, want any
	}{
		{"whole value with a suffix", c.DataDir, "/srv/wirehouse/data"},
		{"an integer", c.OTLP.GRPC.MaxConcurrentStreams, uint32(250)},
		{"a default", c.OTLP.HTTP.Listen, "0.0.0.0:4318"},
		{"a duration", c.Lake.MaxDelay, 30 * time.Second},
		{"an escaped dollar", c.Lake.Tenant, "price$"},
		{"an unset variable", c.Log.Level, "info"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %v, want %v", tc.got, tc.want)
			}
		})
	}
	if len(c.unsetEnv) != 1 || !strings.Contains(c.unsetEnv[0], "WH_TEST_UNSET_LEVEL") || !strings.Contains(c.unsetEnv[0], "line 11") {
		t.Errorf("unset references: %q", c.unsetEnv)
	}
}

func TestConfigUnknownKey(t *testing.T) {
	for _, tc := range []struct {
		name, doc, want string
	}{
		{"top level", "data_dir: x\nadmni: {}\n", `line 2: unknown key "admni" (known here: data_dir, log, otlp, admin, jaeger, limits, metrics, spool, lake, store, forward, rules, alerting, trace_metrics, remote_write, shutdown_timeout)`},
		{"nested", "otlp:\n  grpc:\n    lisen: x\n", `line 3: unknown key "otlp.grpc.lisen" (known here: listen, max_concurrent_streams, max_recv_msg_size, tls)`},
		{"under a file type", "admin: {tls: {cert: x}}\n", `line 1: unknown key "admin.tls.cert"`},
		{"in a list's mapping", "metrics: {promote_resource_attributes: [{a: b}]}\n", `cannot unmarshal`},
		{"a scalar for a mapping", "spool: 3\n", "line 1: spool must be a mapping of keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "wirehouse.yaml")
			if err := os.WriteFile(path, []byte(tc.doc), 0o644); err != nil {
				t.Fatal(err)
			}
			c := DefaultConfig()
			err := c.LoadFile(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "serve.") || strings.Contains(err.Error(), "struct") {
				t.Errorf("the error names a Go type: %v", err)
			}
		})
	}
}

// FuzzDecodeConfig: any file content gets a config or an error, never a
// panic, and an error never names a Go type of this package.
func FuzzDecodeConfig(f *testing.F) {
	if b, err := os.ReadFile("../../deploy/wirehouse.yaml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{"data_dir: x\n", "otlp: {grpc: {lisen: x}}\n", "log: [1]\n", "lake:\n  max_delay: ${env:X:-1m}\n", "spool: 3\n", "- a\n", "&a [*a]\n",
		"store: {logs: false}\nforward: [{name: a, endpoints: [x:1], routing_key: {traces: service}, dns: {port: 1}}]\n",
		"remote_write: [{url: 'http://x/api/v1/write', protobuf_message: io.prometheus.write.v2.Request, queue_config: {max_shards: 2}}]\n",
		"rules: {evaluation_interval: 15s, files: [a.yml], logql_files: ['*.logql'], tenants: {team-a: {files: [b/*.yml]}}, external_url: 'http://x'}\n",
		"alerting: {alertmanagers: [{static_configs: [{targets: ['am:9093']}], basic_auth: {username: u, password: p}, path_prefix: /a}], alert_relabel_configs: [{action: drop}]}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := DefaultConfig()
		_, err := decodeConfig(b, &c)
		if err == nil {
			err = c.Validate() // destinations and remote write are checked here
		}
		if err != nil && strings.Contains(err.Error(), "serve.") {
			t.Fatalf("error names a Go type: %v", err)
		}
	})
}

func TestConfigForward(t *testing.T) {
	t.Setenv("WH_TEST_TOKEN", "s3cret-token-0123456789")
	load := func(doc string) (Config, error) {
		path := filepath.Join(t.TempDir(), "wirehouse.yaml")
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		c := DefaultConfig()
		if err := c.LoadFile(path); err != nil {
			return c, err
		}
		return c, c.Validate()
	}
	c, err := load(`store:
  logs: false
  traces: false
forward:
  - name: backends
    signals: [traces, logs]
    endpoints: [10.0.0.1:4317, 10.0.0.2:4317, 10.0.0.3:4317]
    routing_key: {logs: service}
    headers:
      authorization: "Bearer ${env:WH_TEST_TOKEN}"
    compression: zstd
    retry: {initial_interval: 100ms, max_interval: 5s}
    max_batch_size: 512KiB
  - name: mirror
    protocol: http
    dns: {host: otlp.example, port: 4318, interval: 10s}
    tls: {enabled: true, server_name: otlp.example}
`)
	if err != nil {
		t.Fatal(err)
	}
	if c.Store.Logs || c.Store.Traces || !c.Store.Metrics || len(c.Forward) != 2 {
		t.Fatalf("store %+v, %d destinations", c.Store, len(c.Forward))
	}
	fc, err := c.Forward[0].forwardConfig()
	if err != nil {
		t.Fatal(err)
	}
	if fc.Headers["authorization"] != "Bearer s3cret-token-0123456789" || fc.RouteLogs.String() != "service" ||
		fc.MaxBatchBytes != 512<<10 || fc.RetryInitial != 100*time.Millisecond || len(fc.Signals) != 2 {
		t.Errorf("destination 0: %+v", fc)
	}
	if fc, err := c.Forward[1].forwardConfig(); err != nil || fc.TLS == nil || fc.TLS.ServerName != "otlp.example" || fc.ResolveEvery != 10*time.Second {
		t.Errorf("destination 1: %+v, %v", fc, err)
	}
	if !c.forwarded(otlpwire.SignalLogs) {
		t.Error("logs are forwarded")
	}
	for doc, want := range map[string]string{
		"forward:\n  - {name: a, endpoints: [x:1]}\n  - {name: a, endpoints: [y:1]}\n": "two destinations",
		"forward:\n  - {name: a, endpoints: [x:1], dns: {host: h, port: 1}}\n":         "exclude each other",
		"forward:\n  - {name: a, endpoints: [x:1], routing_key: {logs: traceID}}\n":    "traces only",
		"forward:\n  - {name: a, endpoints: [x:1], routing_key: {traces: span}}\n":     "route key",
		"forward:\n  - {name: a, endpoints: [x:1], protocol: udp}\n":                   "protocol",
		"forward:\n  - {name: 'a b', endpoints: [x:1]}\n":                              "name",
		"forward:\n  - {name: a}\n":                                                    "no endpoints",
		"forward:\n  - {name: a, endpoints: [x:1], compression: lz4}\n":                "compression",
		"forward:\n  - {name: a, endpoints: [x:1], tls: {enabled: true, ca_fil: x}}\n": "unknown key",
		"store: {logs: false, traces: false, metrics: false}\n":                        "nothing is stored",
	} {
		if _, err := load(doc); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want an error with %q", doc, err, want)
		}
	}
}

func TestConfigRemoteWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wirehouse.yaml")
	doc := `remote_write:
  - url: https://mimir.example/api/v1/push
    headers: {X-Scope-OrgID: team-a}
    basic_auth: {username: u, password: p}
    queue_config: {max_shards: 8, capacity: 5000}
    write_relabel_configs:
      - {action: labeldrop, regex: __tenant__}
  - url: http://vm.example:8428/api/v1/write
    protobuf_message: io.prometheus.write.v2.Request
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if err := c.RemoteWrite.AddURL("http://127.0.0.1:9091/api/v1/write"); err != nil {
		t.Fatal(err)
	}
	if c.RemoteWrite.Len() != 3 {
		t.Fatalf("%d remote write endpoints, want 3", c.RemoteWrite.Len())
	}
	rw := c.RemoteWrite.configs
	if rw[0].QueueConfig.MaxShards != 8 || rw[0].Headers["X-Scope-OrgID"] != "team-a" || len(rw[0].WriteRelabelConfigs) != 1 ||
		rw[1].ProtobufMessage != "io.prometheus.write.v2.Request" || rw[2].QueueConfig.Capacity == 0 {
		t.Errorf("configs: %+v %+v %+v", rw[0], rw[1], rw[2])
	}
	for _, bad := range []string{
		"remote_write:\n  - url: http://x\n    queue_confg: {}\n",
		"remote_write:\n  - headers: {a: b}\n",
		"remote_write:\n  - url: http://x\n    protobuf_message: nope\n",
	} {
		if err := os.WriteFile(path, []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		c := DefaultConfig()
		if err := c.LoadFile(path); err == nil {
			t.Errorf("%q: loaded", bad)
		}
	}
}
