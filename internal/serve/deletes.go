package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/wirehouse/wirehouse/internal/deletes"
	"github.com/wirehouse/wirehouse/internal/readapi"
)

// spanDeletes serves the delete requests of spans, wirehouse's own
// companion of Loki's delete API (the tenant as for Tempo's API: the
// token's, or X-Scope-OrgID without admin tokens):
//
//	POST /api/v1/admin/spans/delete?trace_id=<hex>[&trace_id=…]&start=&end=   204
//	POST /api/v1/admin/spans/delete?service=<name>&start=&end=                 204
//	GET  /api/v1/admin/spans/delete                                            the tenant's requests, JSON
//	DELETE /api/v1/admin/spans/delete?request_id=<id>                          204: canceled
//
// start and end are RFC 3339 or Unix seconds (default the epoch and now);
// a bad request is 400 with the reason as text.
func (s *Server) spanDeletes() http.Handler {
	rule := readapi.TenantRule{Default: s.cfg.Lake.Tenant, Header: "X-Scope-OrgID", HeaderAllowed: s.adminTokens == nil}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tenantName, err := rule.Resolve(r)
		if err != nil {
			http.Error(w, err.Error(), readapi.Classify(err).HTTPStatus())
			return
		}
		switch r.Method {
		case http.MethodPost:
			end, err1 := optionalTime(r.FormValue("end"), time.Now())
			start, err2 := optionalTime(r.FormValue("start"), time.Unix(0, 0))
			if err := errors.Join(err1, err2); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_, err = s.deletes.AddSpans(r.Context(), tenantName, r.Form["trace_id"], r.FormValue("service"), start, end)
		case http.MethodGet:
			var reqs []deletes.Request
			if reqs, err = s.deletes.List(r.Context(), tenantName); err == nil {
				out := []deletes.Request{}
				for _, d := range reqs {
					if d.Signal == "traces" {
						out = append(out, d)
					}
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(out) //nolint:errcheck // the client went away
				return
			}
		case http.MethodDelete:
			err = s.deletes.Cancel(r.Context(), tenantName, r.FormValue("request_id"))
		default:
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch {
		case errors.Is(err, deletes.ErrInvalid), errors.Is(err, deletes.ErrNotCancelable):
			http.Error(w, err.Error(), http.StatusBadRequest)
		case errors.Is(err, deletes.ErrNotFound):
			http.Error(w, err.Error(), http.StatusNotFound)
		case err != nil:
			s.log.Error("spans delete request", "err", err)
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
}

// optionalTime reads a time as RFC 3339 or Unix seconds, def if empty.
func optionalTime(v string, def time.Time) (time.Time, error) {
	if v == "" {
		return def, nil
	}
	return readapi.ParseLokiTime(v)
}
