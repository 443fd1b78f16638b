package otlpwire_test

import (
	"testing"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestSignalNames checks each signal's names against the generated gRPC
// service descriptions pdata registers, and that ParseSignal, the lookup
// functions and String agree.
func TestSignalNames(t *testing.T) {
	s := grpc.NewServer()
	plogotlp.RegisterGRPCServer(s, &struct {
		plogotlp.UnimplementedGRPCServer
	}{})
	ptraceotlp.RegisterGRPCServer(s, &struct {
		ptraceotlp.UnimplementedGRPCServer
	}{})
	pmetricotlp.RegisterGRPCServer(s, &struct {
		pmetricotlp.UnimplementedGRPCServer
	}{})
	services := s.GetServiceInfo()
	for _, sig := range otlpwire.Signals {
		t.Run(sig.String(), func(t *testing.T) {
			info, ok := services[sig.ServiceName()]
			if !ok || len(info.Methods) != 1 || info.Methods[0].Name != "Export" {
				t.Errorf("service %q: %+v, registered %v", sig.ServiceName(), info, ok)
			}
			if got := "/" + sig.ServiceName() + "/Export"; sig.ExportMethod() != got {
				t.Errorf("ExportMethod %q, want %q", sig.ExportMethod(), got)
			}
			if got, err := otlpwire.ParseSignal(sig.String()); err != nil || got != sig {
				t.Errorf("ParseSignal(%q) = %v, %v", sig, got, err)
			}
			if got, ok := otlpwire.SignalOfHTTPPath(sig.HTTPPath()); !ok || got != sig || sig.HTTPPath() != "/v1/"+sig.String() {
				t.Errorf("HTTPPath %q maps to %v, %v", sig.HTTPPath(), got, ok)
			}
			if got, ok := otlpwire.SignalOfMethod(sig.ExportMethod()); !ok || got != sig {
				t.Errorf("SignalOfMethod(%q) = %v, %v", sig.ExportMethod(), got, ok)
			}
			b := synth.Generate(sig, synth.Config{Seed: 1, Resources: 2, ScopesPerResource: 2, TotalRecords: 30})
			if n, err := sig.Count(b); err != nil || n != 30 {
				t.Errorf("Count = %d, %v; want 30", n, err)
			}
			if err := sig.Validate(b); err != nil {
				t.Errorf("Validate: %v", err)
			}
			if err := sig.Validate(b[:len(b)-1]); err == nil {
				t.Error("Validate accepted a truncated request")
			}
		})
	}
	for _, bad := range []otlpwire.Signal{0, 4, 255} {
		if bad.Valid() || bad.HTTPPath() != "" || bad.ExportMethod() != "" || bad.String() == "" {
			t.Errorf("invalid %d: valid %v, path %q, method %q", uint8(bad), bad.Valid(), bad.HTTPPath(), bad.ExportMethod())
		}
		if _, err := bad.Count(nil); err == nil {
			t.Errorf("invalid %d: Count succeeded", uint8(bad))
		}
	}
	for _, name := range []string{"", "profiles", "Logs", "log"} {
		if _, err := otlpwire.ParseSignal(name); err == nil {
			t.Errorf("ParseSignal(%q) succeeded", name)
		}
	}
}
