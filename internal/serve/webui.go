package serve

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/webui"
)

// settings is the configuration in brief that the status page shows:
// where the server listens (the bound addresses once started), what it
// stores and keeps, where it forwards, and whether it asks for tokens.
// Nothing secret: no token, header or credential, of each remote write
// queue only its count, and no tenant's name (the status API adds the
// default tenant's for a request that sees every tenant's figures).
func (s *Server) settings() []webui.Setting {
	c := s.cfg
	var out []webui.Setting
	add := func(name, format string, args ...any) {
		out = append(out, webui.Setting{Name: name, Value: fmt.Sprintf(format, args...)})
	}
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	addr := func(listen string, bound fmt.Stringer) string {
		if bound != nil {
			return bound.String()
		}
		if listen == "" {
			return "off"
		}
		return listen
	}
	var a Addrs
	if s.adminLn != nil {
		a = s.Addrs()
	}
	tls := func(on bool) string {
		if on {
			return " (TLS)"
		}
		return ""
	}
	add("OTLP/gRPC", "%s%s", addr(c.OTLP.GRPC.Listen, a.GRPC), tls(c.OTLP.GRPC.TLS.Enabled()))
	add("OTLP/HTTP", "%s%s", addr(c.OTLP.HTTP.Listen, a.HTTP), tls(c.OTLP.HTTP.TLS.Enabled()))
	add("Admin HTTP", "%s%s", addr(c.Admin.Listen, a.Admin), tls(s.adminTLS != nil))
	add("Jaeger remote storage gRPC", "%s", addr(c.Jaeger.StorageListen, a.Jaeger))
	add("OTLP bearer tokens", "%s", onOff(c.OTLP.Auth.BearerTokensFile != ""))
	add("Admin bearer tokens", "%s", onOff(s.adminTokens != nil))
	add("Data directory", "%s", c.DataDir)
	var stored []string
	for _, sig := range []struct {
		name string
		on   bool
	}{{"logs", c.Store.Logs}, {"traces", c.Store.Traces}, {"metrics", c.Store.Metrics}} {
		if sig.on {
			stored = append(stored, sig.name)
		}
	}
	add("Stored", "%s", orNone(strings.Join(stored, ", ")))
	add("Spool", "max %s, sync %s", sizeOrUnlimited(c.Spool.MaxSize), c.Spool.Sync)
	lake := "<data>/lake"
	if c.Lake.URL != "" {
		lake = c.Lake.URL + " (node " + s.lakeNode + ")"
	}
	add("Lake", "%s, max delay %s, compaction %s", lake, c.Lake.MaxDelay, onOff(c.Lake.Compact))
	add("Lake retention", "%s, %s", durationOrForever(c.Lake.Retention), sizeOrUnlimited(c.Lake.RetentionSize))
	add("Metric store retention", "%s, %s", durationOrForever(c.Metrics.Retention), sizeOrUnlimited(c.Metrics.RetentionSize))
	add("Exemplars kept", "%d", c.Metrics.MaxExemplars)
	for _, f := range c.Forward {
		where := strings.Join(f.Endpoints, ", ")
		if f.DNS.Host != "" {
			where = "dns " + f.DNS.Host
		}
		signals := "logs, metrics, traces"
		if len(f.Signals) > 0 {
			signals = strings.Join(f.Signals, ", ")
		}
		proto := f.Protocol
		if proto == "" {
			proto = "grpc"
		}
		add("Forward "+f.Name, "%s over %s: %s", signals, proto, where)
	}
	if n := c.RemoteWrite.Len(); n > 0 {
		add("Remote write", "%d queue(s)", n)
	}
	add("Memory ceiling", "%s", ByteSize(c.MemoryCeiling()))
	add("Max services counted", "%s", strconv.Itoa(c.Limits.MaxServices))
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func sizeOrUnlimited(b ByteSize) string {
	if b == 0 {
		return "no size limit"
	}
	return b.String()
}

func durationOrForever(d time.Duration) string {
	if d == 0 {
		return "kept forever"
	}
	return d.String()
}
