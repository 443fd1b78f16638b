// Package buildinfo says which wirehouse a binary is: its version, VCS
// revision and Go version, for `wirehouse version`, the
// wirehouse_build_info metric and Prometheus' buildinfo endpoint.
//
// The version is the one the linker was given
// (-ldflags "-X github.com/wirehouse/wirehouse/internal/buildinfo.version=v1.2.3"),
// else the main module's version when built with `go install
// module@version`, else "devel". The revision comes from the VCS stamp Go
// embeds in binaries built inside a checkout.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// version is set by the linker; see the package documentation.
var version string

// Info is what a binary knows of its build.
type Info struct {
	Version   string // "v1.2.3", or "devel"
	Revision  string // VCS revision, "-dirty" appended for a modified tree; "" if unknown
	GoVersion string // runtime.Version()
	Platform  string // GOOS/GOARCH
}

var get = sync.OnceValue(func() Info {
	i := Info{Version: version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if i.Version == "" {
			i.Version = "devel"
		}
		return i
	}
	if i.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		i.Version = bi.Main.Version
	}
	if i.Version == "" {
		i.Version = "devel"
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			i.Revision = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if modified && i.Revision != "" {
		i.Revision += "-dirty"
	}
	return i
})

// Get returns the binary's build information.
func Get() Info { return get() }

// String is one line for humans: "wirehouse v1.2.3 (revision 0123abc,
// go1.26.8, linux/amd64)".
func (i Info) String() string {
	rev := i.Revision
	if rev == "" {
		rev = "unknown"
	}
	return fmt.Sprintf("wirehouse %s (revision %s, %s, %s)", i.Version, rev, i.GoVersion, i.Platform)
}

// Collector returns the wirehouse_build_info gauge, always 1, labelled
// with the build's version, revision, goversion, goos and goarch, as
// Prometheus' own prometheus_build_info is.
func Collector() prometheus.Collector {
	i := Get()
	return prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "wirehouse_build_info",
		Help: "A metric with a constant '1' value labeled by the version, revision and Go version wirehouse was built from.",
		ConstLabels: prometheus.Labels{
			"version": i.Version, "revision": i.Revision, "goversion": i.GoVersion,
			"goos": runtime.GOOS, "goarch": runtime.GOARCH,
		},
	}, func() float64 { return 1 })
}
