package serve

import (
	"github.com/wirehouse/wirehouse/internal/bucket"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseByteSize(t *testing.T) {
	for in, want := range map[string]ByteSize{
		"0": 0, "1024": 1024, "16MiB": 16 << 20, "16 MiB": 16 << 20, "1GiB": 1 << 30, "2TiB": 2 << 40, "3TB": 3e12,
		"10MB": 10_000_000, "2KB": 2000, "3KiB": 3072, "7B": 7,
	} {
		t.Run(in, func(t *testing.T) {
			got, err := ParseByteSize(in)
			if err != nil || got != want {
				t.Errorf("got %d, %v; want %d", got, err, want)
			}
		})
	}
	for _, in := range []string{"", "x", "-1", "1.5MiB", "16mb", "99999999999GiB"} {
		if _, err := ParseByteSize(in); err == nil {
			t.Errorf("ParseByteSize(%q) accepted", in)
		}
	}
	if s := ByteSize(64 << 20).String(); s != "64MiB" {
		t.Errorf("String() = %q", s)
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wirehouse.yaml")
	const doc = `
data_dir: /var/lib/wirehouse
log: {level: debug, format: json}
otlp:
  grpc: {listen: "0.0.0.0:14317", max_concurrent_streams: 7, tls: {cert_file: /c.pem, key_file: /k.pem, client_ca_file: /ca.pem}}
  http: {listen: "0.0.0.0:14318", read_header_timeout: 3s, cors: {allowed_origins: ["https://*.example.com"], max_age: 2h}}
admin: {listen: "0.0.0.0:19090"}
limits: {max_request_size: 8MiB, max_decompressed_size: 32MiB, max_inflight: 1GiB, retry_after: 5s}
lake: {retention: 720h, retention_size: 100GiB}
metrics: {promote_scope_metadata: false, label_limit: 0}
shutdown_timeout: 1m
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	c := DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	if c.DataDir != "/var/lib/wirehouse" || c.Log.Level != "debug" || c.Log.Format != "json" ||
		c.OTLP.GRPC.Listen != "0.0.0.0:14317" || c.OTLP.GRPC.MaxConcurrentStreams != 7 ||
		c.OTLP.HTTP.Listen != "0.0.0.0:14318" || c.OTLP.HTTP.ReadHeaderTimeout != 3*time.Second ||
		c.Admin.Listen != "0.0.0.0:19090" || c.Limits.MaxRequestSize != 8<<20 ||
		c.Limits.MaxDecompressedSize != 32<<20 || c.Limits.MaxInflight != 1<<30 ||
		c.Limits.RetryAfter != 5*time.Second || c.ShutdownTimeout != time.Minute ||
		c.Lake.Retention != 720*time.Hour || c.Lake.RetentionSize != 100<<30 ||
		c.Metrics.PromoteScopeMetadata || c.Metrics.LabelLimit != 0 || !DefaultConfig().Metrics.PromoteScopeMetadata ||
		c.OTLP.GRPC.TLS.CertFile != "/c.pem" || c.OTLP.GRPC.TLS.KeyFile != "/k.pem" || c.OTLP.GRPC.TLS.ClientCAFile != "/ca.pem" ||
		c.OTLP.HTTP.TLS.Enabled() || c.Admin.TLS.Enabled() ||
		len(c.OTLP.HTTP.CORS.AllowedOrigins) != 1 || c.OTLP.HTTP.CORS.AllowedOrigins[0] != "https://*.example.com" || c.OTLP.HTTP.CORS.MaxAge != 2*time.Hour {
		t.Errorf("loaded %+v", c)
	}
	if c.OTLP.HTTP.IdleTimeout != DefaultConfig().OTLP.HTTP.IdleTimeout {
		t.Error("a key absent from the file lost its default")
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	for _, tc := range []struct {
		name, bad, want string
	}{
		{"misspelt key", "data_dri: x\n", "data_dri"},
		{"bad size", "limits: {max_inflight: lots}\n", "invalid size"},
		{"bad duration", "otlp: {http: {read_timeout: soon}}\n", "soon"},
		{"list for a mapping", "log: [1, 2]\n", "line 1: log must be a mapping of keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(path, []byte(tc.bad), 0o644); err != nil {
				t.Fatal(err)
			}
			c := DefaultConfig()
			if err := c.LoadFile(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c = DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Errorf("empty file: %v", err)
	}
}

func TestValidate(t *testing.T) {
	for name, mod := range map[string]func(*Config){
		"log level":    func(c *Config) { c.Log.Level = "loud" },
		"log format":   func(c *Config) { c.Log.Format = "xml" },
		"label limit":  func(c *Config) { c.Metrics.LabelLimit = -1 },
		"data dir":     func(c *Config) { c.DataDir = "" },
		"limits order": func(c *Config) { c.Limits.MaxInflight = 1 },
		"shutdown":     func(c *Config) { c.ShutdownTimeout = 0 },
		"max services": func(c *Config) { c.Limits.MaxServices = 0 },
		"promote both": func(c *Config) {
			c.Metrics.PromoteAll, c.Metrics.PromoteAttributes = true, []string{"host.name"}
		},
		"ignore alone":   func(c *Config) { c.Metrics.IgnoreAttributes = []string{"host.name"} },
		"lake retention": func(c *Config) { c.Lake.Retention = -time.Hour },
		"cors origin":    func(c *Config) { c.OTLP.HTTP.CORS.AllowedOrigins = []string{"https://*.*"} },
		"trace metrics exemplars, none kept": func(c *Config) {
			c.DataDir = "x"
			c.TraceMetrics.Exemplars = true
		},
		"trace metrics exemplars per point": func(c *Config) {
			c.DataDir, c.Metrics.MaxExemplars = "x", 10
			c.TraceMetrics.Exemplars, c.TraceMetrics.MaxExemplarsPerPoint = true, 0
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := DefaultConfig()
			mod(&c)
			if c.Validate() == nil {
				t.Error("accepted")
			}
		})
	}
}

// FuzzParseLakeURL: a URL accepted names a bucket and a valid prefix,
// and s3://bucket/prefix parses back to them.
func FuzzParseLakeURL(f *testing.F) {
	for _, s := range []string{"", "s3://b", "s3://b/p/q/", "s3://b/../x", "file:///x", "s3://u@b/p", "s3://b/p?x=1", "s3://b/%2e%2e/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, prefix, err := ParseLakeURL(raw)
		if err != nil || raw == "" {
			return
		}
		if name == "" || prefix != "" && bucket.ValidName(prefix) != nil {
			t.Fatalf("%q: bucket %q, prefix %q", raw, name, prefix)
		}
		again := (&url.URL{Scheme: "s3", Host: name, Path: "/" + prefix}).String()
		if n2, p2, err := ParseLakeURL(again); err != nil || n2 != name || p2 != prefix {
			t.Fatalf("%q: %q, %q; %q parses as %q, %q, %v", raw, name, prefix, again, n2, p2, err)
		}
	})
}

// TestLokiPushLimits: limits.loki_push reaches the receiver's Loki
// limits, key by key, and a limit that is not positive is refused.
func TestLokiPushLimits(t *testing.T) {
	c := DefaultConfig()
	c.DataDir = t.TempDir()
	if _, err := decodeConfig([]byte("limits:\n  loki_push:\n    max_line_size: 1KiB\n    max_label_names_per_series: 30\n    max_label_name_length: 64\n    max_label_value_length: 128\n    reject_old_samples_max_age: 2h\n    creation_grace_period: 1m\n"), &c); err != nil {
		t.Fatal(err)
	}
	got := c.receiverConfig().Loki
	if got.MaxLineBytes != 1024 || got.MaxLabelNames != 30 || got.MaxLabelNameBytes != 64 || got.MaxLabelValueBytes != 128 ||
		got.MaxAge != 2*time.Hour || got.MaxAhead != time.Minute {
		t.Errorf("receiver's Loki limits %+v", got)
	}
	c.Limits.LokiPush.MaxLabelNamesPerSeries = 0
	if err := c.Validate(); err == nil {
		t.Error("max_label_names_per_series 0 accepted")
	}
}
