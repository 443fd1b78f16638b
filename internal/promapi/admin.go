package promapi

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"

	jsoniter "github.com/json-iterator/go"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// adminOnly answers 503 unless Config.Admin is set.
func (a *API) adminOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if a.cfg.Admin == nil {
			a.fail(w, &apiError{typ: errUnavail, err: errors.New("admin APIs disabled")})
			return
		}
		h(w, r)
	}
}

// defaultTenantOnly answers 403 to a request whose context carries a
// tenant other than the default: h acts on every tenant's data.
func (a *API) defaultTenantOnly(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if t := tenant.FromContext(r.Context()); t != "" {
			a.fail(w, &apiError{typ: errForbidden, err: fmt.Errorf("tenant %q: only the default tenant may do this: it acts on every tenant's metrics", t)})
			return
		}
		h(w, r)
	}
}

// deleteSeries answers /api/v1/admin/tsdb/delete_series as Prometheus
// does: the samples of the series every match[] selects, between start and
// end (default: all time), are deleted with tombstones; 204 when done.
func (a *API) deleteSeries(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		a.fail(w, badData("error parsing form values: %v", err))
		return
	}
	if len(r.Form["match[]"]) == 0 {
		a.fail(w, badData("no match[] parameter provided"))
		return
	}
	// As Prometheus: no ordering check, an end before start deletes
	// nothing. (It must not reach the TSDB: a backwards tombstone
	// interval makes tsdb's compaction panic.)
	mint, maxt, aerr := window(r)
	if aerr != nil {
		a.fail(w, aerr)
		return
	}
	for _, sel := range r.Form["match[]"] {
		ms, err := a.parser.ParseMetricSelector(sel)
		if err != nil {
			a.fail(w, invalidParam("match[]", "%v", err))
			return
		}
		if maxt < mint {
			continue
		}
		if err := a.cfg.Admin.Delete(r.Context(), mint, maxt, ms...); err != nil {
			a.fail(w, &apiError{typ: errInternal, err: err})
			return
		}
	}
	w.WriteHeader(http.StatusNoContent)
}

// cleanTombstones answers /api/v1/admin/tsdb/clean_tombstones: deleted
// samples are removed from disk; 204 when done.
func (a *API) cleanTombstones(w http.ResponseWriter, _ *http.Request) {
	if err := a.cfg.Admin.CleanTombstones(); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: err})
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// snapshot answers /api/v1/admin/tsdb/snapshot as Prometheus does: the
// blocks (and the head unless skip_head) are hard-linked or written into
// <snapDir>/<time>-<random>, whose name is returned.
func (a *API) snapshot(w http.ResponseWriter, r *http.Request) {
	skipHead := false
	if v := r.FormValue("skip_head"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			a.fail(w, invalidParam("skip_head", "unable to parse boolean: %v", err))
			return
		}
		skipHead = b
	}
	name := fmt.Sprintf("%s-%016x", a.cfg.now().UTC().Format("20060102T150405Z0700"), rand.Uint64())
	dir := filepath.Join(a.cfg.SnapshotDir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot directory: %w", err)})
		return
	}
	if err := a.cfg.Admin.Snapshot(dir, !skipHead); err != nil {
		a.fail(w, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot: %w", err)})
		return
	}
	a.respond(w, nil, func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("name")
		s.WriteString(name)
		s.WriteObjectEnd()
	})
}
