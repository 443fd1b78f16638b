package lokiapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/wirehouse/wirehouse/internal/deletes"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/readapi"
	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Deletes keeps delete requests (internal/deletes implements it).
type Deletes interface {
	Add(ctx context.Context, tenant, query string, start, end time.Time) (deletes.Request, error)
	List(ctx context.Context, tenant string) ([]deletes.Request, error)
	Cancel(ctx context.Context, tenant, id string) error
	// Pending is the test of the records of tenant its requests not yet
	// carried out select (nil for none), hidden from queries.
	Pending(ctx context.Context, tenant string) func(*eval.Record) bool
}

// pendingOf is d's Pending, nil without d.
func pendingOf(d Deletes) func(ctx context.Context, tenant string) func(*eval.Record) bool {
	if d == nil {
		return nil
	}
	return d.Pending
}

// noContent is an answer of no body: 204.
type noContent struct{}

// deleteAdd answers POST /loki/api/v1/delete: query (a stream selector
// and line filters), start (default the epoch), end (default now); 204.
func (h *Handler) deleteAdd(r *http.Request) (any, error) {
	q := r.FormValue("query")
	if q == "" {
		return nil, fmt.Errorf("%w: query is required", errBad)
	}
	end, err := parseTime(r.FormValue("end"), h.cfg.Now())
	if err != nil {
		return nil, err
	}
	start, err := parseTime(r.FormValue("start"), time.Unix(0, 0))
	if err != nil {
		return nil, err
	}
	if _, err := h.cfg.Deletes.Add(r.Context(), tenant.FromContext(r.Context()), q, start, end); err != nil {
		if errors.Is(err, deletes.ErrInvalid) {
			return nil, fmt.Errorf("%w: %w", errBad, err)
		}
		return nil, err
	}
	return noContent{}, nil
}

// deleteRequest is a request as Loki lists it: times in seconds.
type deleteRequest struct {
	RequestID string  `json:"request_id"`
	StartTime float64 `json:"start_time"`
	EndTime   float64 `json:"end_time"`
	Query     string  `json:"query"`
	Status    string  `json:"status"`
	CreatedAt float64 `json:"created_at"`
}

// deleteList answers GET /loki/api/v1/delete: the tenant's requests.
func (h *Handler) deleteList(r *http.Request) (any, error) {
	reqs, err := h.cfg.Deletes.List(r.Context(), tenant.FromContext(r.Context()))
	if err != nil {
		return nil, err
	}
	out := make([]deleteRequest, 0, len(reqs))
	for _, d := range reqs {
		if d.Signal != "" && d.Signal != "logs" {
			continue // spans' requests: wirehouse's own API lists them
		}
		out = append(out, deleteRequest{RequestID: d.ID, StartTime: float64(d.Start) / 1e9, EndTime: float64(d.End) / 1e9,
			Query: d.Query, Status: d.Status, CreatedAt: float64(d.Created.UnixMilli()) / 1e3})
	}
	return out, nil
}

// deleteCancel answers DELETE /loki/api/v1/delete?request_id=: 204; 404
// for no such request, 400 for one processed already.
func (h *Handler) deleteCancel(r *http.Request) (any, error) {
	id := r.FormValue("request_id")
	if id == "" {
		return nil, fmt.Errorf("%w: request_id is required", errBad)
	}
	switch err := h.cfg.Deletes.Cancel(r.Context(), tenant.FromContext(r.Context()), id); {
	case errors.Is(err, deletes.ErrNotFound):
		return nil, readapi.Errorf(readapi.KindNotFound, "no delete request %s", id)
	case errors.Is(err, deletes.ErrNotCancelable):
		return nil, fmt.Errorf("%w: deletion of a request already processed is not allowed", errBad)
	case err != nil:
		return nil, err
	}
	return noContent{}, nil
}
