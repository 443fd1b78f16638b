package deletes

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/lakeload"
	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql/eval"
	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Statuses of a request, as Loki names them (and canceled).
const (
	StatusReceived  = "received"
	StatusProcessed = "processed"
	StatusCanceled  = "canceled"
)

// Prefix is where the requests are kept in the lake's bucket, one object
// each: <Prefix><tenant>/<id>.json. It starts with "_", which DuckDB's,
// pyarrow's and Spark's file discovery pass over.
const Prefix = "_wirehouse/deletes/"

// Request is a delete request, as kept (docs/format/deletes.md).
type Request struct {
	ID     string `json:"request_id"`
	Tenant string `json:"tenant"` // its lake name (tenant=<name>)
	// Signal is "logs" (a LogQL Query) or "traces" (spans of the
	// TraceIDs, hex, or of the Service).
	Signal   string   `json:"signal"`
	Query    string   `json:"query,omitempty"`
	TraceIDs []string `json:"trace_ids,omitempty"`
	Service  string   `json:"service,omitempty"`
	// Start and End bound the records' times, both included, ns.
	Start int64 `json:"start_ns"`
	End   int64 `json:"end_ns"`
	// Created is when the request was made; Through the last spool
	// record the node that took it (Node) held then: the request is
	// processed once that node's records up to it are in the lake.
	Created time.Time `json:"created_at"`
	Node    string    `json:"node,omitempty"`
	Through uint64    `json:"through"`
	Status  string    `json:"status"`
	// Progress: the files rewritten (or deleted, every row selected)
	// and the rows removed, added after each file; Processed, when done.
	Files     int64     `json:"files_rewritten"`
	Rows      int64     `json:"rows_removed"`
	Processed time.Time `json:"processed_at,omitzero"`
}

// Errors a caller answers as the API's.
var (
	ErrNotFound      = errors.New("no such delete request")
	ErrNotCancelable = errors.New("the delete request is processed already")
	ErrInvalid       = errors.New("invalid delete request")
	errDamaged       = errors.New("deletes: a request that cannot be read")
)

// Config configures a Store.
type Config struct {
	// Bucket holds the lake and the requests. It must be set.
	Bucket bucket.Bucket
	// Node is this node's name in a lake several nodes write ("" for
	// one node); Through gives the last record in its spool now.
	Node    string
	Through func() uint64
	// Kick, if set, is called after a request is added: the lake
	// loader's Kick, for a pass now.
	Kick func()
	// Logger tells of processing; nil discards.
	Logger *slog.Logger
	// Now is the clock; default time.Now.
	Now func() time.Time
}

// Store keeps the delete requests of the lake and processes them. It is
// safe for concurrent use.
type Store struct {
	cfg Config
	log *slog.Logger
	mu  sync.Mutex // over a request's read, change and write

	// The logs requests not yet carried out, compiled, by tenant, for
	// Pending: listed again after a change here, or pendingEvery after
	// the last listing (another node's changes, in a shared bucket).
	pmu      sync.Mutex
	pending  map[string][]*eval.Selection
	received map[string][]Request // by tenant, both signals
	listedAt time.Time

	// ended are the requests read in an end state (processed,
	// canceled), by object name, with the object's size and time when
	// read: List reads such an object again only when the listing shows
	// it changed (a rewrite it cannot rule out: another node's progress
	// racing a cancel), not at every listing.
	emu   sync.Mutex
	ended map[string]endedRequest
}

// endedRequest is a request read in an end state, and its object's
// attributes then.
type endedRequest struct {
	size int64
	mod  time.Time
	r    Request
}

// pendingEvery is how long Pending trusts its last listing of the
// requests.
const pendingEvery = 10 * time.Second

// Pending returns the test of the records of tenant that its logs
// delete requests not yet carried out select, nil when there are none:
// the LogQL engine hides them (internal/lokiapi), as Loki's
// filter-and-delete mode does, so a record is gone from answers from the
// moment the request is made, whether it is still in the spool or in the
// lake, until the rewrite removes it for good. A listing that fails
// keeps the last one.
func (s *Store) Pending(ctx context.Context, tenantName string) func(*eval.Record) bool {
	s.pmu.Lock()
	s.refresh(ctx)
	sels := s.pending[tenantName]
	s.pmu.Unlock()
	if len(sels) == 0 {
		return nil
	}
	return func(r *eval.Record) bool {
		for _, sel := range sels {
			if sel.Match(r) {
				return true
			}
		}
		return false
	}
}

// refresh lists the requests again for Pending and Drop when the last
// listing is older than pendingEvery. s.pmu is held.
func (s *Store) refresh(ctx context.Context) {
	if !s.listedAt.IsZero() && time.Since(s.listedAt) <= pendingEvery {
		return
	}
	s.listedAt = time.Now() // a listing that fails is tried again then too
	reqs, err := s.List(ctx, "")
	if err != nil {
		s.log.Warn("delete requests: cannot list them; queries hide, and the lake's writes leave out, what the last listing held", "err", err)
		return
	}
	s.pending, s.received = map[string][]*eval.Selection{}, map[string][]Request{}
	for _, r := range reqs {
		if r.Status != StatusReceived {
			continue
		}
		s.received[r.Tenant] = append(s.received[r.Tenant], r)
		if r.signal() != "logs" {
			continue
		}
		sel, err := eval.CompileSelection(r.Query, time.Unix(0, r.Start), time.Unix(0, r.End))
		if err == nil {
			s.pending[r.Tenant] = append(s.pending[r.Tenant], sel)
		}
	}
}

// Drop returns the rows of a lake file of sig, tenant and hour's
// partition that the tenant's requests not yet carried out select, for
// the lake writer (lake.WriterConfig.Drop): nil when none may. So the
// records a request selects that were in the spool when it came (or came
// since) are left out as they go into the lake, rather than written and
// rewritten by the next pass; the pass still removes what a write it
// did not know of let in.
func (s *Store) Drop(sig otlpwire.Signal, tenantName string, hour time.Time) lake.RowMatcher {
	s.pmu.Lock()
	s.refresh(context.Background())
	reqs := s.received[tenantName]
	s.pmu.Unlock()
	var ms []lake.RowMatcher
	for _, r := range reqs {
		if r.signal() != sig.String() || !r.spansHour(hour) {
			continue
		}
		if m, err := r.matcher(); err == nil {
			ms = append(ms, m)
		}
	}
	switch len(ms) {
	case 0:
		return nil
	case 1:
		return ms[0]
	}
	return func(pf *parquet.File, rd io.ReaderAt, size int64) ([]int64, error) {
		var all []int64
		for _, m := range ms {
			rows, err := m(pf, rd, size)
			if err != nil {
				return nil, err
			}
			all = append(all, rows...)
		}
		slices.Sort(all)
		return slices.Compact(all), nil
	}
}

// changed makes the next Pending or Drop list the requests again.
func (s *Store) changed() {
	s.pmu.Lock()
	s.listedAt = time.Time{}
	s.pmu.Unlock()
}

// New returns the Store of cfg.
func New(cfg Config) (*Store, error) {
	if cfg.Bucket == nil || cfg.Through == nil {
		return nil, errors.New("deletes: Bucket and Through must be set")
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{cfg: cfg, log: cfg.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s, nil
}

func object(tenant, id string) string { return Prefix + tenant + "/" + id + ".json" }

// Add records a request of tenant (its lake name) to delete the log
// records query selects (a stream selector and line filters) between
// start and end, both included. A query or range the request cannot
// take is an error wrapping ErrInvalid.
func (s *Store) Add(ctx context.Context, tenantName, query string, start, end time.Time) (Request, error) {
	if !tenant.Valid(tenantName) {
		return Request{}, fmt.Errorf("%w: tenant %q", ErrInvalid, tenantName)
	}
	if _, err := eval.CompileSelection(query, start, end); err != nil {
		return Request{}, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return s.add(ctx, Request{Tenant: tenantName, Signal: "logs", Query: query, Start: start.UnixNano(), End: end.UnixNano()})
}

// AddSpans records a request of tenant to delete the spans of the
// traces traceIDs (hex, 32 digits), or, with no trace id, those of
// service, that start between start and end, both included. Both, or
// neither, is an error wrapping ErrInvalid.
func (s *Store) AddSpans(ctx context.Context, tenantName string, traceIDs []string, service string, start, end time.Time) (Request, error) {
	switch {
	case !tenant.Valid(tenantName):
		return Request{}, fmt.Errorf("%w: tenant %q", ErrInvalid, tenantName)
	case len(traceIDs) > 0 && service != "" || len(traceIDs) == 0 && service == "":
		return Request{}, fmt.Errorf("%w: give trace ids or a service, not both", ErrInvalid)
	case end.Before(start):
		return Request{}, fmt.Errorf("%w: end before start", ErrInvalid)
	}
	ids := make([]string, 0, len(traceIDs))
	for _, t := range traceIDs {
		b, err := hex.DecodeString(t)
		if err != nil || len(b) != 16 {
			return Request{}, fmt.Errorf("%w: trace id %q: want 32 hexadecimal digits", ErrInvalid, t)
		}
		ids = append(ids, hex.EncodeToString(b)) // as the lake writes them: lower case
	}
	return s.add(ctx, Request{Tenant: tenantName, Signal: "traces", TraceIDs: ids, Service: service, Start: start.UnixNano(), End: end.UnixNano()})
}

// validID reports whether id can be a request's: add's, hex digits in
// lower case. Others (a name the bucket would refuse, a path) are no
// request's.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := range len(id) {
		if c := id[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// add keeps r, new: its id, time, node, spool record and status set.
func (s *Store) add(ctx context.Context, r Request) (Request, error) {
	var id [8]byte
	rand.Read(id[:])
	r.ID, r.Created, r.Node, r.Through, r.Status = hex.EncodeToString(id[:]), s.cfg.Now().UTC(), s.cfg.Node, s.cfg.Through(), StatusReceived
	if err := s.put(ctx, r); err != nil {
		return Request{}, err
	}
	if s.cfg.Kick != nil {
		s.cfg.Kick()
	}
	s.log.Info("delete request received", "tenant", r.Tenant, "request_id", r.ID, "signal", r.Signal, "query", r.Query,
		"trace_ids", len(r.TraceIDs), "service", r.Service, "start", time.Unix(0, r.Start).UTC(), "end", time.Unix(0, r.End).UTC())
	return r, nil
}

func (s *Store) put(ctx context.Context, r Request) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if err := s.cfg.Bucket.Upload(ctx, object(r.Tenant, r.ID), bytes.NewReader(b)); err != nil {
		return fmt.Errorf("deletes: write request %s: %w", r.ID, err)
	}
	s.changed()
	return nil
}

func (s *Store) get(ctx context.Context, name string) (Request, error) {
	rc, err := s.cfg.Bucket.Get(ctx, name)
	if errors.Is(err, bucket.ErrNotFound) {
		return Request{}, ErrNotFound
	}
	if err != nil {
		return Request{}, fmt.Errorf("deletes: read %s: %w", name, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return Request{}, fmt.Errorf("deletes: read %s: %w", name, err)
	}
	var r Request
	if err := json.Unmarshal(b, &r); err != nil {
		return Request{}, fmt.Errorf("%w: %s: %w", errDamaged, name, err)
	}
	return r, nil
}

// List returns tenant's requests, oldest first ("" lists every
// tenant's). It lists the objects and reads those of requests it has not
// seen in an end state, or that changed since.
func (s *Store) List(ctx context.Context, tenantName string) ([]Request, error) {
	prefix := Prefix
	if tenantName != "" {
		prefix += tenantName + "/"
	}
	var out []Request
	for a, err := range s.cfg.Bucket.List(ctx, prefix) {
		if err != nil {
			return nil, fmt.Errorf("deletes: list: %w", err)
		}
		if !strings.HasSuffix(a.Name, ".json") {
			continue
		}
		s.emu.Lock()
		e, ok := s.ended[a.Name]
		s.emu.Unlock()
		if ok && e.size == a.Size && e.mod.Equal(a.ModTime) {
			out = append(out, e.r)
			continue
		}
		r, err := s.get(ctx, a.Name)
		switch {
		case errors.Is(err, ErrNotFound):
			continue
		case errors.Is(err, errDamaged):
			// A damaged object must not stop every request: it is
			// reported and passed over.
			s.log.Error("delete requests: an unreadable request passed over", "object", a.Name, "err", err)
			continue
		case err != nil:
			return nil, err
		}
		s.emu.Lock()
		if r.Status == StatusProcessed || r.Status == StatusCanceled {
			if s.ended == nil {
				s.ended = map[string]endedRequest{}
			}
			s.ended[a.Name] = endedRequest{a.Size, a.ModTime, r}
		} else {
			delete(s.ended, a.Name)
		}
		s.emu.Unlock()
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b Request) int { return a.Created.Compare(b.Created) })
	return out, nil
}

// Cancel cancels tenant's request id if it is not processed yet
// (ErrNotCancelable; ErrNotFound for no such request). A request being
// processed is canceled between two files: what it removed stays
// removed.
func (s *Store) Cancel(ctx context.Context, tenantName, id string) error {
	if !tenant.Valid(tenantName) || !validID(id) {
		return ErrNotFound
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, err := s.get(ctx, object(tenantName, id))
	if err != nil {
		return err
	}
	switch r.Status {
	case StatusCanceled:
		return nil
	case StatusProcessed:
		return ErrNotCancelable
	}
	r.Status = StatusCanceled
	return s.put(ctx, r)
}

// waitKick is how soon Process asks for another pass while a request
// waits for its records to be in the lake (up to lake.max_delay).
const waitKick = 5 * time.Second

// Process works on the requests not yet processed whose records are all
// in the lake: it rewrites the tenant's files of the hours the request
// spans without the records it selects, a file at a time
// (lake.RewriteFile), counting its progress in the request after each,
// and marks it processed when a pass finds nothing left to remove. A
// partition with a swap in its grace period is left to a later pass (one
// is asked for when the grace is over);
// so is everything once p.Hold says no. After a crash the next pass
// starts the request over: the files rewritten hold no record it
// selects, and an interrupted swap is settled by its intent.
func (s *Store) Process(ctx context.Context, p lakeload.RewritePass) error {
	reqs, err := s.List(ctx, "")
	if err != nil {
		return err
	}
	waiting := false
	defer func() {
		if waiting && s.cfg.Kick != nil {
			time.AfterFunc(waitKick, s.cfg.Kick) // a pass soon, not at the next period
		}
	}()
	for _, r := range reqs {
		if r.Status != StatusReceived {
			continue
		}
		if at, ok := p.Cursor(r.Node); !ok || at < r.Through {
			waiting = true
			continue // records of the request's time still on their way to the lake
		}
		if p.Hold != nil && !p.Hold() {
			return nil
		}
		if err := s.process(ctx, r, p); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) process(ctx context.Context, r Request, p lakeload.RewritePass) error {
	match, err := r.matcher()
	if err != nil {
		return s.finish(ctx, r) // cannot happen (Add checked it): nothing to do
	}
	files, err := lake.DataFiles(ctx, s.cfg.Bucket, r.signal()+"/tenant="+r.Tenant+"/")
	if err != nil {
		return err
	}
	// A file at a time (lake.RewriteFile): a partition whose swap is in
	// its grace period waits, and a pass is asked for once it is over.
	pending := map[string]bool{} // partitions
	for _, f := range files {
		dir := path.Dir(f.Name)
		if !r.spansHour(f.Hour) || f.First == 0 || pending[dir] {
			continue // outside the range, not a loader's file (wirehouse ingest's), or waiting
		}
		if p.Hold != nil && !p.Hold() {
			return nil
		}
		// Canceled since? Stop between files.
		if cur, err := s.get(ctx, object(r.Tenant, r.ID)); err != nil || cur.Status != StatusReceived {
			return err
		}
		p.Lock.Lock()
		res, err := lake.RewriteFile(ctx, s.cfg.Bucket, f.Name, p.Options, match)
		p.Lock.Unlock()
		switch {
		case errors.Is(err, lake.ErrIntentPending):
			pending[dir] = true
			continue
		case err != nil:
			return fmt.Errorf("deletes: request %s: %w", r.ID, err)
		case res.Removed == 0:
			continue
		}
		s.log.Info("delete request: file rewritten", "request_id", r.ID, "file", f.Name, "output", res.Output,
			"rows_removed", res.Removed, "rows", res.Rows)
		if r, err = s.progress(ctx, r, 1, res.Removed); err != nil {
			return err
		}
	}
	if len(pending) > 0 {
		if s.cfg.Kick != nil {
			time.AfterFunc(p.Options.Grace+time.Second, s.cfg.Kick) // the next file once the swap before is settled
		}
		return nil
	}
	return s.finish(ctx, r)
}

// progress adds files and rows to r's progress, as kept, and returns it.
func (s *Store) progress(ctx context.Context, r Request, files, rows int64) (Request, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.get(ctx, object(r.Tenant, r.ID))
	if err != nil {
		return r, err
	}
	cur.Files += files
	cur.Rows += rows
	return cur, s.put(ctx, cur)
}

// finish marks r processed, unless it was canceled.
func (s *Store) finish(ctx context.Context, r Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := s.get(ctx, object(r.Tenant, r.ID))
	if err != nil || cur.Status != StatusReceived {
		return err
	}
	cur.Status, cur.Processed = StatusProcessed, s.cfg.Now().UTC()
	if err := s.put(ctx, cur); err != nil {
		return err
	}
	s.log.Info("delete request processed", "tenant", cur.Tenant, "request_id", cur.ID, "files_rewritten", cur.Files, "rows_removed", cur.Rows)
	return nil
}

// signal is the lake's name of r's signal: "logs" or "traces".
func (r Request) signal() string { return cmp.Or(r.Signal, "logs") }

// spansHour reports whether r's time range meets the hour from hour.
func (r Request) spansHour(hour time.Time) bool {
	return !hour.Add(time.Hour).Before(time.Unix(0, r.Start)) && !hour.After(time.Unix(0, r.End))
}

// matcher is the rows of a file r removes, for lake.RewriteFile.
func (r Request) matcher() (lake.RowMatcher, error) {
	if r.signal() == "traces" {
		ids := map[string]bool{}
		for _, id := range r.TraceIDs {
			ids[id] = true
		}
		return func(_ *parquet.File, rd io.ReaderAt, _ int64) ([]int64, error) {
			return lakeread.MatchSpanRows(rd, func(traceID, service string, start int64) bool {
				return start >= r.Start && start <= r.End && (ids[traceID] || r.Service != "" && service == r.Service)
			})
		}, nil
	}
	sel, err := eval.CompileSelection(r.Query, time.Unix(0, r.Start), time.Unix(0, r.End))
	if err != nil {
		return nil, err
	}
	scan := sel.Scan()
	q := lakeread.LogQuery{Start: scan.Start, End: scan.End, Service: scan.Service, Contains: scan.Contains, Matches: scan.Matches}
	var rec eval.Record
	return func(pf *parquet.File, _ io.ReaderAt, _ int64) ([]int64, error) {
		return lakeread.MatchLogRows(pf, q, func(lr *lakeread.LogRecord) bool {
			rec = eval.Record{Time: lr.Time, Line: lr.Line, Service: lr.Service, Resource: kvs(rec.Resource[:0], lr.Resource),
				ScopeName: lr.ScopeName, ScopeVersion: lr.ScopeVersion, SeverityText: lr.SeverityText, SeverityNumber: lr.SeverityNumber,
				TraceID: lr.TraceID, SpanID: lr.SpanID, Attrs: kvs(rec.Attrs[:0], lr.Attrs)}
			return sel.Match(&rec)
		})
	}, nil
}

func kvs(dst []eval.KV, src []lakeread.KV) []eval.KV {
	for _, kv := range src {
		dst = append(dst, eval.KV{Key: kv.Key, Value: kv.Value})
	}
	return dst
}
