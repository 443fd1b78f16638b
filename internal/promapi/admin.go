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

	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// adminOnly is f, answering 503 unless Config.Admin is set.
func (a *API) adminOnly(f readapi.Func[answer]) readapi.Func[answer] {
	return func(r *http.Request) (answer, error) {
		if a.cfg.Admin == nil {
			return answer{}, &apiError{typ: errUnavail, err: errors.New("admin APIs disabled")}
		}
		return f(r)
	}
}

// defaultTenantOnly is f, answering 403 to a request whose context
// carries a tenant other than the default: f acts on every tenant's data.
func (a *API) defaultTenantOnly(f readapi.Func[answer]) readapi.Func[answer] {
	return func(r *http.Request) (answer, error) {
		if t := tenant.FromContext(r.Context()); t != "" {
			return answer{}, &apiError{typ: errForbidden, err: fmt.Errorf("tenant %q: only the default tenant may do this: it acts on every tenant's metrics", t)}
		}
		return f(r)
	}
}

// deleteSeries answers /api/v1/admin/tsdb/delete_series as Prometheus
// does: the samples of the series every match[] selects, between start and
// end (default: all time), are deleted with tombstones; 204 when done.
func (a *API) deleteSeries(r *http.Request) (answer, error) {
	if err := r.ParseForm(); err != nil {
		return answer{}, badData("error parsing form values: %v", err)
	}
	if len(r.Form["match[]"]) == 0 {
		return answer{}, badData("no match[] parameter provided")
	}
	// As Prometheus: no ordering check, an end before start deletes
	// nothing. (It must not reach the TSDB: a backwards tombstone
	// interval makes tsdb's compaction panic.)
	mint, maxt, aerr := window(r)
	if aerr != nil {
		return answer{}, aerr
	}
	for _, sel := range r.Form["match[]"] {
		ms, err := a.parser.ParseMetricSelector(sel)
		if err != nil {
			return answer{}, invalidParam("match[]", "%v", err)
		}
		if maxt < mint {
			continue
		}
		if err := a.cfg.Admin.Delete(r.Context(), mint, maxt, ms...); err != nil {
			return answer{}, &apiError{typ: errInternal, err: err}
		}
	}
	return answer{}, nil // no data: 204
}

// cleanTombstones answers /api/v1/admin/tsdb/clean_tombstones: deleted
// samples are removed from disk; 204 when done.
func (a *API) cleanTombstones(*http.Request) (answer, error) {
	if err := a.cfg.Admin.CleanTombstones(); err != nil {
		return answer{}, &apiError{typ: errInternal, err: err}
	}
	return answer{}, nil // no data: 204
}

// snapshot answers /api/v1/admin/tsdb/snapshot as Prometheus does: the
// blocks (and the head unless skip_head) are hard-linked or written into
// <snapDir>/<time>-<random>, whose name is returned.
func (a *API) snapshot(r *http.Request) (answer, error) {
	skipHead := false
	if v := r.FormValue("skip_head"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return answer{}, invalidParam("skip_head", "unable to parse boolean: %v", err)
		}
		skipHead = b
	}
	name := fmt.Sprintf("%s-%016x", a.cfg.now().UTC().Format("20060102T150405Z0700"), rand.Uint64())
	dir := filepath.Join(a.cfg.SnapshotDir, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return answer{}, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot directory: %w", err)}
	}
	if err := a.cfg.Admin.Snapshot(dir, !skipHead); err != nil {
		return answer{}, &apiError{typ: errInternal, err: fmt.Errorf("create snapshot: %w", err)}
	}
	return answer{data: func(s *jsoniter.Stream) {
		s.WriteObjectStart()
		s.WriteObjectField("name")
		s.WriteString(name)
		s.WriteObjectEnd()
	}}, nil
}
