package ruler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
	promconfig "github.com/prometheus/prometheus/config"
	"github.com/prometheus/prometheus/discovery"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/notifier"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/rules"

	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/internal/watch"
)

// Retriever lists rule groups and alerting rules, in the order they were
// loaded: Prometheus' web API's RulesRetriever (a *rules.Manager is one).
type Retriever interface {
	RuleGroups() []*rules.Group
	AlertingRules() []*rules.AlertingRule
}

// noRules is the Retriever of a tenant without rules.
type noRules struct{}

func (noRules) RuleGroups() []*rules.Group           { return nil }
func (noRules) AlertingRules() []*rules.AlertingRule { return nil }

// Ruler evaluates every tenant's rules. Its methods may be called from
// several goroutines.
type Ruler struct {
	cfg     Config
	log     *slog.Logger
	ctx     context.Context
	cancel  context.CancelFunc
	tenants map[string]*tenantRules
	order   []string // tenants, sorted

	notifier  *notifier.Manager  // nil: no Alertmanagers
	discovery *discovery.Manager // the Alertmanagers' targets
	extLabels labels.Labels      // the alerting config's external labels
	reloads   prometheus.Gauge   // last reload successful (1) or not (0)
	reloadAt  prometheus.Gauge   // time of the last successful one
	failures  prometheus.Counter // reloads refused

	mu      sync.Mutex // one load at a time; guards watched
	watched *watch.Files
	files   []string // the files of the last load, sorted

	wg      sync.WaitGroup
	started bool
	closed  bool
}

// tenantRules are a tenant's rule files and the managers that run them.
type tenantRules struct {
	tenant string
	files  Files
	prom   *rules.Manager
	logs   *rules.Manager // nil without LogQL files at start
}

// New loads every tenant's rule files and returns a Ruler that evaluates
// them once Run is called. A file that cannot be read or parsed is an
// error naming it.
func New(cfg Config) (*Ruler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	reg := cfg.Registerer
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &Ruler{cfg: cfg, log: log, ctx: ctx, cancel: cancel, tenants: map[string]*tenantRules{}}
	r.reloads = prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_rules_last_reload_successful",
		Help: "Whether the last load of the rule files succeeded (1) or was refused, the rules before it kept (0)."})
	r.reloadAt = prometheus.NewGauge(prometheus.GaugeOpts{Name: "wirehouse_rules_last_reload_success_timestamp_seconds",
		Help: "Time of the last successful load of the rule files."})
	r.failures = prometheus.NewCounter(prometheus.CounterOpts{Name: "wirehouse_rules_reload_failures_total",
		Help: "Loads of the rule files refused (a file unreadable or malformed); the rules before each kept running."})
	for _, c := range []prometheus.Collector{r.reloads, r.reloadAt, r.failures} {
		if err := reg.Register(c); err != nil {
			cancel()
			return nil, fmt.Errorf("register ruler metrics: %w", err)
		}
	}
	var externalURL string
	if cfg.Alerting != nil {
		if err := r.openNotifier(ctx, reg); err != nil {
			cancel()
			return nil, err
		}
	}
	externalURL = strings.TrimSuffix(cfg.ExternalURL, "/")
	metrics := rules.NewGroupMetrics(reg)
	promParser := parser.NewParser(parser.Options{})
	for t, f := range cfg.Tenants {
		tctx := tenant.NewContext(ctx, t)
		tr := &tenantRules{tenant: t, files: f}
		opts := func(q rules.QueryFunc, notify rules.NotifyFunc) *rules.ManagerOptions {
			return &rules.ManagerOptions{
				NameValidationScheme: model.UTF8Validation,
				QueryFunc:            r.admitted(t, q),
				NotifyFunc:           notify,
				Context:              tctx,
				AppendableV2:         cfg.Appendable,
				Queryable:            cfg.Queryable,
				Logger:               log.With("component", "rules", "tenant", t),
				OutageTolerance:      cfg.OutageTolerance,
				ForGracePeriod:       cfg.ForGracePeriod,
				ResendDelay:          cfg.ResendDelay,
				Metrics:              metrics,
			}
		}
		po := opts(rules.EngineQueryFunc(cfg.Engine, cfg.Queryable), r.notifyFunc(t, externalURL, promqlLink))
		po.Parser = promParser
		tr.prom = rules.NewManager(po)
		if len(f.LogQL) > 0 {
			lt := t
			if lt == "" {
				lt = cfg.DefaultLakeTenant
			}
			lo := opts(logqlQueryFunc(cfg.Logs, lt), r.notifyFunc(t, externalURL, logqlLink))
			lo.Parser = logqlParser{promParser}
			lo.RuleDependencyController = noDependencies{}
			tr.logs = rules.NewManager(lo)
		}
		r.tenants[t] = tr
		r.order = append(r.order, t)
	}
	slices.Sort(r.order)
	if err := r.Reload(); err != nil {
		cancel()
		if r.notifier != nil {
			r.notifier.Stop()
		}
		return nil, err
	}
	return r, nil
}

// openNotifier makes the notifier and the discovery of its Alertmanagers
// from cfg.Alerting, as Prometheus' main does.
func (r *Ruler) openNotifier(ctx context.Context, reg prometheus.Registerer) error {
	c := r.cfg.Alerting
	r.extLabels = c.GlobalConfig.ExternalLabels
	r.notifier = notifier.NewManager(&notifier.Options{QueueCapacity: 10000, DrainOnShutdown: true, Registerer: reg},
		model.UTF8Validation, r.log.With("component", "notifier"))
	if err := r.notifier.ApplyConfig(c); err != nil {
		return fmt.Errorf("apply Alertmanager config: %w", err)
	}
	sdMetrics, err := discovery.CreateAndRegisterSDMetrics(reg)
	if err != nil {
		return fmt.Errorf("register discovery metrics: %w", err)
	}
	// Targets are handed to the notifier within a second (Prometheus'
	// default waits up to 5 s), so that the first alerts are not
	// dropped for want of an Alertmanager (they are sent again only
	// after the resend delay).
	r.discovery = discovery.NewManager(ctx, r.log.With("component", "discovery notify"), reg, sdMetrics,
		discovery.Name("notify"), discovery.Updatert(time.Second))
	if r.discovery == nil {
		return errors.New("make the Alertmanagers' discovery: its metrics could not be registered")
	}
	sd := map[string]discovery.Configs{}
	for k, v := range c.AlertingConfig.AlertmanagerConfigs.ToMap() {
		sd[k] = v.ServiceDiscoveryConfigs
	}
	if err := r.discovery.ApplyConfig(sd); err != nil {
		return fmt.Errorf("apply Alertmanager discovery: %w", err)
	}
	return nil
}

// admitted runs q within the query budget, as tenant t's query.
func (r *Ruler) admitted(t string, q rules.QueryFunc) rules.QueryFunc {
	return func(ctx context.Context, qs string, ts time.Time) (promql.Vector, error) {
		tk, err := r.cfg.Gate.Admit(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("admit rule query: %w", err)
		}
		defer tk.Done()
		return q(querybudget.NewContext(ctx, tk), qs, ts)
	}
}

// Link functions make an alert's generator URL path from its expression.
func promqlLink(expr string) string {
	return "/graph?g0.expr=" + url.QueryEscape(expr) + "&g0.tab=1"
}

func logqlLink(expr string) string { return "/logs?query=" + url.QueryEscape(expr) }

// notifyFunc sends tenant t's alerts to the notifier, as rules.SendAlerts
// does, each labeled with its tenant.
func (r *Ruler) notifyFunc(t, externalURL string, link func(string) string) rules.NotifyFunc {
	return func(_ context.Context, expr string, alerts ...*rules.Alert) {
		if r.notifier == nil || len(alerts) == 0 {
			return
		}
		out := make([]*notifier.Alert, 0, len(alerts))
		for _, a := range alerts {
			ls := a.Labels
			if t != "" {
				b := labels.NewBuilder(ls)
				b.Set(TenantLabel, t)
				ls = b.Labels()
			}
			n := &notifier.Alert{StartsAt: a.FiredAt, Labels: ls, Annotations: a.Annotations,
				GeneratorURL: externalURL + link(expr)}
			if !a.ResolvedAt.IsZero() {
				n.EndsAt = a.ResolvedAt
			} else {
				n.EndsAt = a.ValidUntil
			}
			out = append(out, n)
		}
		r.notifier.Send(out...)
	}
}

// expand returns the files globs name, sorted, each once. A name without
// glob characters must exist.
func expand(globs []string) ([]string, error) {
	var out []string
	for _, g := range globs {
		m, err := filepath.Glob(g)
		if err != nil {
			return nil, fmt.Errorf("expand rule files %q: %w", g, err)
		}
		if len(m) == 0 && !strings.ContainsAny(g, `*?[\`) {
			if _, err := os.Stat(g); err != nil {
				return nil, fmt.Errorf("read rule file: %w", err)
			}
		}
		out = append(out, m...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Reload loads every tenant's rule files again. If any cannot be read or
// parsed, no manager changes: each keeps its rules, and the error names
// the file.
func (r *Ruler) Reload() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	err := r.reloadLocked()
	if err != nil {
		r.reloads.Set(0)
		r.failures.Inc()
		r.log.Error("rule files refused; the rules before kept running", "err", err)
		return err
	}
	r.reloads.Set(1)
	r.reloadAt.SetToCurrentTime()
	return nil
}

type load struct {
	m     *rules.Manager
	files []string
}

func (r *Ruler) reloadLocked() error {
	var loads []load
	var all []string
	for _, t := range r.order {
		tr := r.tenants[t]
		for _, x := range []struct {
			m     *rules.Manager
			globs []string
		}{{tr.prom, tr.files.PromQL}, {tr.logs, tr.files.LogQL}} {
			if x.m == nil {
				continue
			}
			files, err := expand(x.globs)
			if err != nil {
				return fmt.Errorf("tenant %q: %w", t, err)
			}
			// Load first, to refuse every change when any file is bad
			// (Update logs the errors, and returns a generic one).
			if _, errs := x.m.LoadGroups(r.cfg.Interval, r.extLabels, r.cfg.ExternalURL, nil, false, files...); len(errs) > 0 {
				return fmt.Errorf("tenant %q: load rules: %w", t, errors.Join(errs...))
			}
			loads = append(loads, load{x.m, files})
			all = append(all, files...)
		}
	}
	slices.Sort(all)
	all = slices.Compact(all)
	w := watch.New(r.cfg.WatchEvery, all...)
	if err := w.Mark(); err != nil {
		return fmt.Errorf("stat rule files: %w", err)
	}
	for _, l := range loads {
		if err := l.m.Update(r.cfg.Interval, l.files, r.extLabels, r.cfg.ExternalURL, nil); err != nil {
			return fmt.Errorf("update rules: %w", err)
		}
	}
	r.watched, r.files = w, all
	return nil
}

// changed reports whether the rule files differ from the last load's:
// another set of files, or one of them changed.
func (r *Ruler) changed(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.watched.Changed(now) {
		return true
	}
	var all []string
	for _, tr := range r.tenants {
		for _, globs := range [][]string{tr.files.PromQL, tr.files.LogQL} {
			files, err := expand(globs)
			if err != nil {
				return true
			}
			all = append(all, files...)
		}
	}
	slices.Sort(all)
	return !slices.Equal(slices.Compact(all), r.files)
}

// Run starts the evaluations, the notifier and the watch of the files;
// it returns at once. Close stops them.
func (r *Ruler) Run() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.closed {
		return
	}
	r.started = true
	if r.notifier != nil {
		r.wg.Go(func() { r.notifier.Run(r.discovery.SyncCh()) })
		r.wg.Go(func() { r.discovery.Run() })
	}
	// The rules start once the Alertmanagers are known (at most 5 s):
	// an alert firing at the first evaluation then reaches them.
	managers := make(chan struct{})
	r.wg.Go(func() {
		defer close(managers)
		if r.notifier == nil || len(r.cfg.Alerting.AlertingConfig.AlertmanagerConfigs) == 0 {
			return
		}
		deadline := time.Now().Add(5 * time.Second)
		for len(r.notifier.Alertmanagers()) == 0 && time.Now().Before(deadline) {
			select {
			case <-r.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	})
	for _, tr := range r.tenants {
		r.wg.Go(func() {
			<-managers
			tr.prom.Run()
		})
		if tr.logs != nil {
			r.wg.Go(func() {
				<-managers
				tr.logs.Run()
			})
		}
	}
	r.wg.Go(func() {
		tick := time.NewTicker(r.cfg.WatchEvery)
		defer tick.Stop()
		for {
			select {
			case <-r.ctx.Done():
				return
			case now := <-tick.C:
				if r.changed(now) {
					r.log.Info("rule files changed; loading them again")
					r.Reload() //nolint:errcheck // logged and counted
				}
			}
		}
	})
}

// Close stops every evaluation, then sends the alerts queued (the
// notifier drains its queue) and stops.
func (r *Ruler) Close() error {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil
	}
	r.closed = true
	started := r.started
	r.mu.Unlock()
	// Ends the wait for the Alertmanagers, the watch and the discovery
	// first: the managers' Stop waits for their groups, which start only
	// once Run's wait is over.
	r.cancel()
	if started {
		for _, tr := range r.tenants {
			tr.prom.Stop()
			if tr.logs != nil {
				tr.logs.Stop()
			}
		}
	}
	if r.notifier != nil {
		r.notifier.Stop()
	}
	r.wg.Wait()
	return nil
}

// PromQL returns tenant t's Prometheus rules.
func (r *Ruler) PromQL(t string) Retriever {
	if tr := r.tenants[t]; tr != nil {
		return tr.prom
	}
	return noRules{}
}

// LogQL returns tenant t's LogQL rules.
func (r *Ruler) LogQL(t string) Retriever {
	if tr := r.tenants[t]; tr != nil && tr.logs != nil {
		return tr.logs
	}
	return noRules{}
}

// Alertmanagers returns the Alertmanagers alerts are sent to; the caller
// owns the slice.
func (r *Ruler) Alertmanagers() []*url.URL {
	if r.notifier == nil {
		return nil
	}
	return r.notifier.Alertmanagers()
}

// DroppedAlertmanagers returns the Alertmanagers discovered and dropped
// by relabeling; the caller owns the slice.
func (r *Ruler) DroppedAlertmanagers() []*url.URL {
	if r.notifier == nil {
		return nil
	}
	return r.notifier.DroppedAlertmanagers()
}

// AlertingConfig parses Prometheus' alerting block (the YAML under
// "alerting:") into the Config Alerting takes.
func AlertingConfig(yamlBlock string) (*promconfig.Config, error) {
	c, err := promconfig.Load("alerting:\n"+indent(yamlBlock), slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("load alerting config: %w", err)
	}
	return c, nil
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// Static is a Retriever of fixed groups, in the order given: rules loaded
// and evaluated elsewhere (the APIs' tests give it Prometheus' managers'
// groups).
type Static []*rules.Group

// RuleGroups returns the groups.
func (s Static) RuleGroups() []*rules.Group { return s }

// AlertingRules returns the groups' alerting rules, in order.
func (s Static) AlertingRules() []*rules.AlertingRule {
	var out []*rules.AlertingRule
	for _, g := range s {
		for _, r := range g.Rules() {
			if a, ok := r.(*rules.AlertingRule); ok {
				out = append(out, a)
			}
		}
	}
	return out
}
