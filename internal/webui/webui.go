package webui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Config configures a Handler. Start from DefaultConfig.
type Config struct {
	// Gatherer is what the status page's history samples: the server's
	// registry. It must be set.
	Gatherer prometheus.Gatherer
	// Interval is the time between two samples. Default 5s.
	Interval time.Duration
	// Window is how much history is kept (Window/Interval samples).
	// Default 15 minutes.
	Window time.Duration
	// Tenant is the tenant of a request whose context names none (the
	// lake's default tenant).
	Tenant string
	// Restrict shows a request only its own tenant's series where a
	// metric has a tenant label (serve sets it with admin bearer
	// tokens); without it every tenant's are shown, as /metrics does.
	// A series without the label is the default tenant's (Tenant), as
	// the metric store's are.
	Restrict bool
	// AllTenants, if set, tells the requests that see every tenant's
	// series even with Restrict (serve: an operator's token's). Default:
	// none.
	AllTenants func(*http.Request) bool
	// Settings, if set, returns what the status page shows as the
	// server's configuration in brief (called for each request, so it
	// may name the addresses bound since). No secrets, and no tenant's
	// name: the status API adds the default tenant's, as "Default
	// tenant", for a request that sees every tenant's series.
	Settings func() []Setting
	// Logger gets a line when a sample fails. Default slog.Default().
	Logger *slog.Logger
	// Now is the sampler's clock. Default time.Now.
	Now func() time.Time
}

// Setting is one line of the status page's configuration summary.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DefaultConfig returns the defaults, without a Gatherer.
func DefaultConfig() Config {
	return Config{Interval: 5 * time.Second, Window: 15 * time.Minute, Tenant: "default"}
}

// Validate reports the first field of c that New would refuse.
func (c Config) Validate() error {
	switch {
	case c.Gatherer == nil:
		return errors.New("webui: Gatherer not set")
	case c.Interval <= 0 || c.Window < c.Interval:
		return fmt.Errorf("webui: Interval (%s) must be positive and at most Window (%s)", c.Interval, c.Window)
	case c.Window/c.Interval > maxSamples:
		return fmt.Errorf("webui: Window/Interval is %d samples, more than %d", c.Window/c.Interval, maxSamples)
	case !tenant.Valid(c.Tenant):
		return fmt.Errorf("webui: Tenant %q is not a valid tenant name", c.Tenant)
	}
	return nil
}

// Handler serves the pages and the status API.
type Handler struct {
	cfg     Config
	assets  *assets
	sampler *Sampler
}

// New validates cfg and returns a Handler; its sampler starts with Run.
func New(cfg Config) (*Handler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	a, err := loadAssets()
	if err != nil {
		return nil, err
	}
	return &Handler{cfg: cfg, assets: a, sampler: newSampler(cfg)}, nil
}

// Run samples the Gatherer every Interval until ctx ends.
func (h *Handler) Run(ctx context.Context) { h.sampler.Run(ctx) }

// pages are the patterns of the pages' paths; each serves index.html,
// whose script draws the page the path names. Public lets them through.
var pages = []string{"/{$}", "/graph", "/traces", "/trace/{id}", "/services", "/logs", "/alerts"}

// Register adds the pages, their files under /static/ and
// /api/wirehouse/status to mux.
func (h *Handler) Register(mux *http.ServeMux) {
	index := h.assets.handler("index.html")
	for _, p := range pages {
		mux.Handle("GET "+p, index)
	}
	mux.Handle("GET /static/{file...}", h.assets)
	mux.Handle("GET /api/wirehouse/status", gzhttp.GzipHandler(h.statusAPI()))
}

// Public reports whether r asks for the pages' code only (an HTML page,
// a script, a style sheet, an icon: the same for everyone, no data), which
// the admin server serves without a bearer token. Paths that are not
// clean are not public (the mux would redirect them elsewhere).
func Public(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	if strings.Contains(p, "//") || strings.Contains(p, "/.") {
		return false
	}
	for _, pat := range pages {
		base, wild, ok := strings.Cut(pat, "{")
		switch {
		case !ok && p == pat, wild == "$}" && p == base:
			return true
		case ok && wild != "$}":
			if rest, ok := strings.CutPrefix(p, base); ok && rest != "" && !strings.Contains(rest, "/") {
				return true // one path segment: /trace/{id}
			}
		}
	}
	file, ok := strings.CutPrefix(p, "/static/")
	return ok && file != ""
}

// tenantOf is the tenant whose series r sees, "" for all: with Restrict,
// unless AllTenants says r sees every tenant's, r's own, which
// readapi.Handle put in its context (statusAPI).
func (h *Handler) tenantOf(r *http.Request) string {
	if !h.cfg.Restrict || h.cfg.AllTenants != nil && h.cfg.AllTenants(r) {
		return ""
	}
	return tenant.FromContext(r.Context())
}
