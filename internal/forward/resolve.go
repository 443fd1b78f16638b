package forward

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Resolver gives a destination's endpoints: host:port for OTLP/gRPC, or
// the same (or a base URL) for OTLP/HTTP. A Destination resolves at
// start and then every Config.ResolveEvery; an error, or an empty
// answer, keeps the endpoints it had.
type Resolver interface {
	Resolve(ctx context.Context) ([]string, error)
}

// Static is a fixed list of endpoints.
type Static []string

// Resolve returns the list.
func (s Static) Resolve(context.Context) ([]string, error) { return slices.Clone(s), nil }

// DNS finds endpoints by name, as the Collector's loadbalancing
// exporter's dns and k8s-headless resolvers do: with SRV unset, every
// address (A and AAAA records) of Host with Port; with SRV set, Host is
// an SRV name (such as _otlp._tcp.backends.example) and each record
// gives its target and port.
type DNS struct {
	Host string
	Port int
	SRV  bool
	// Resolver, if set, is used instead of net.DefaultResolver (tests
	// point it at their own DNS server).
	Resolver *net.Resolver
}

// Validate reports what is missing from d.
func (d DNS) Validate() error {
	switch {
	case d.Host == "":
		return errors.New("dns resolver: no host name")
	case !d.SRV && (d.Port <= 0 || d.Port > 65535):
		return fmt.Errorf("dns resolver: port %d: want 1 to 65535", d.Port)
	}
	return nil
}

// Resolve looks the name up.
func (d DNS) Resolve(ctx context.Context) ([]string, error) {
	r := d.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	var out []string
	if d.SRV {
		_, srvs, err := r.LookupSRV(ctx, "", "", d.Host)
		if err != nil {
			return nil, fmt.Errorf("resolve SRV %s: %w", d.Host, err)
		}
		for _, s := range srvs {
			out = append(out, net.JoinHostPort(strings.TrimSuffix(s.Target, "."), strconv.Itoa(int(s.Port))))
		}
	} else {
		addrs, err := r.LookupHost(ctx, d.Host)
		if err != nil {
			return nil, fmt.Errorf("resolve %s: %w", d.Host, err)
		}
		for _, a := range addrs {
			out = append(out, net.JoinHostPort(a, strconv.Itoa(d.Port)))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}
