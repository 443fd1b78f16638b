package lokiapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/querybudget"
)

// tailEvery is how often a tail looks for new lines; the spool's records
// are read too, so a line shows within about this long of its export.
const tailEvery = time.Second

// tailMessage is a message of Loki's tail WebSocket.
type tailMessage struct {
	Streams        []tailStream  `json:"streams"`
	DroppedEntries []tailDropped `json:"dropped_entries,omitempty"`
}

type tailStream struct {
	Stream map[string]string `json:"stream"`
	Values [][2]string       `json:"values"`
}

type tailDropped struct {
	Labels    map[string]string `json:"labels"`
	Timestamp string            `json:"timestamp"`
}

var upgrader = websocket.Upgrader{
	// Grafana's data source proxy and logcli connect from elsewhere; the
	// admin port's bearer tokens, not the origin, say who may read.
	CheckOrigin: func(*http.Request) bool { return true },
}

// tail serves /loki/api/v1/tail?query=&start=&limit=&delay_for=: a
// WebSocket that first sends the last limit lines since start (default
// an hour ago), then, every second, the lines newer than the newest sent,
// in time order. A line that arrives with a time older than the newest
// already sent is not sent (Loki tails by arrival; the lake by time).
//
// Its tenant is resolved by the API's rule (Handler.rule, the one
// readapi.Handle resolves the JSON endpoints' by), and its errors before
// the upgrade are answered as theirs (Handler.WriteError). A tail takes a
// slot of the query budget's (Config.Gate: at most so many open, all
// tenants and per tenant; past them 429 with a Retry-After before the
// upgrade), and the tails of one tenant with the same query and delay
// share one scan a second (tailGroup) instead of running one each.
func (h *Handler) tail(w http.ResponseWriter, r *http.Request) {
	t, err := h.rule.Resolve(r)
	var lq *logql.LogQuery
	text := r.FormValue("query")
	if err == nil {
		var e logql.Expr
		if e, err = logql.Parse(text); err == nil {
			var ok bool
			if lq, ok = e.(*logql.LogQuery); !ok {
				err = fmt.Errorf("%w: tail takes a log query, not a metric query", errBad)
			}
		}
	}
	limit, delay := 100, time.Duration(0)
	if err == nil && r.FormValue("limit") != "" {
		if limit, err = strconv.Atoi(r.FormValue("limit")); err != nil || limit <= 0 || limit > h.cfg.MaxLines {
			err = fmt.Errorf("%w: limit must be 1 to %d", errBad, h.cfg.MaxLines)
		}
	}
	if err == nil && r.FormValue("delay_for") != "" {
		var secs int
		if secs, err = strconv.Atoi(r.FormValue("delay_for")); err != nil || secs < 0 || secs > 5 {
			err = fmt.Errorf("%w: delay_for must be 0 to 5 seconds", errBad)
		}
		delay = time.Duration(secs) * time.Second
	}
	var from time.Time
	if err == nil {
		from, err = parseTime(r.FormValue("start"), h.cfg.Now().Add(-time.Hour))
	}
	if err != nil {
		h.WriteError(w, r, err)
		return
	}
	release, err := h.cfg.Gate.OpenTail(t)
	if err != nil {
		h.WriteError(w, r, err)
		return
	}
	defer release()
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered
	}
	defer conn.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopTail := context.AfterFunc(h.tails, cancel) // Close ends it
	defer stopTail()
	go func() { // the client closing, or going away
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				cancel()
				return
			}
		}
	}()
	closeWith := func(err error) {
		if ctx.Err() != nil {
			return
		}
		code := websocket.CloseInternalServerErr
		var be *querybudget.BusyError
		if errors.As(err, &be) {
			code = websocket.CloseTryAgainLater
		}
		conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(code, err.Error())) //nolint:errcheck
	}
	// The newest limit lines since from: a query of this tail's own.
	newest := from
	if end := h.cfg.Now().Add(-delay); end.After(from) {
		res, err := h.run(ctx, Query{Expr: lq, Tenant: t, Start: from, End: end, Limit: limit})
		if err != nil {
			closeWith(err)
			return
		}
		msg, n := tailMessageOf(res.Streams, true, newest)
		if len(msg.Streams) > 0 {
			if err := conn.WriteJSON(msg); err != nil {
				return
			}
		}
		newest = n
	}
	// Then the lines of the shared scan, newer than the newest sent.
	sub := h.joinTail(tailKey{t, text, delay}, lq, newest)
	defer h.leaveTail(sub)
	for {
		select {
		case <-ctx.Done():
			return
		case streams, ok := <-sub.ch:
			if !ok {
				closeWith(sub.err)
				return
			}
			msg, n := tailMessageOf(streams, false, newest)
			if len(msg.Streams) > 0 {
				if err := conn.WriteJSON(msg); err != nil {
					return
				}
			}
			newest = n
		}
	}
}

// tailMessageOf is the message of streams' entries at or after newest
// (newest first in each stream when reversed: a backward query's), and
// the time just past the newest of them (newest when none).
func tailMessageOf(streams []Stream, reversed bool, newest time.Time) (tailMessage, time.Time) {
	msg := tailMessage{Streams: []tailStream{}}
	next := newest
	for _, s := range streams {
		var ts tailStream
		for i := range s.Entries {
			e := s.Entries[i]
			if reversed {
				e = s.Entries[len(s.Entries)-1-i]
			}
			t := time.Unix(0, e.Time)
			if t.Before(newest) {
				continue // sent already, or older than what was
			}
			ts.Values = append(ts.Values, [2]string{strconv.FormatInt(e.Time, 10), e.Line})
			if !t.Before(next) {
				next = t.Add(1)
			}
		}
		if len(ts.Values) > 0 {
			ts.Stream = s.Labels.Map()
			msg.Streams = append(msg.Streams, ts)
		}
	}
	return msg, next
}

// run runs q within the query budget: admitted by the gate (waiting as
// it allows), its ticket in the context, within the query timeout.
func (h *Handler) run(ctx context.Context, q Query) (Result, error) {
	tk, err := h.cfg.Gate.Admit(ctx, q.Tenant)
	if err != nil {
		return Result{}, err
	}
	defer tk.Done()
	ctx, cancel := context.WithTimeout(querybudget.NewContext(ctx, tk), h.cfg.Timeout)
	defer cancel()
	return h.eng.Exec(ctx, q)
}

// tailKey says which tails share a scan: one tenant's, of one query
// text, with one delay.
type tailKey struct {
	tenant, query string
	delay         time.Duration
}

// tailGroup is the scan the tails of one key share: every second it
// queries the lines newer than the newest it found (from) and hands
// them to every tail.
type tailGroup struct {
	key  tailKey
	lq   *logql.LogQuery
	stop context.CancelFunc

	mu   sync.Mutex
	from time.Time
	subs map[*tailSub]struct{}
}

// tailSub is one tail's subscription to its group's scans. ch is closed
// when the group ends, with err saying why (nil: the server closing).
type tailSub struct {
	g   *tailGroup
	ch  chan []Stream
	err error
}

// tailBacklog is how many scans' lines a tail may have unsent before it
// is closed as too slow.
const tailBacklog = 8

// joinTail subscribes to the scan of key, starting one from newest if
// none runs.
func (h *Handler) joinTail(key tailKey, lq *logql.LogQuery, newest time.Time) *tailSub {
	h.tailMu.Lock()
	defer h.tailMu.Unlock()
	g := h.tailGroups[key]
	if g == nil {
		ctx, stop := context.WithCancel(h.tails)
		g = &tailGroup{key: key, lq: lq, stop: stop, from: newest, subs: map[*tailSub]struct{}{}}
		h.tailGroups[key] = g
		go h.scan(ctx, g)
	}
	sub := &tailSub{g: g, ch: make(chan []Stream, tailBacklog)}
	g.mu.Lock()
	g.subs[sub] = struct{}{}
	g.mu.Unlock()
	return sub
}

// leaveTail ends sub; the last tail of a group stops its scan.
func (h *Handler) leaveTail(sub *tailSub) {
	h.tailMu.Lock()
	defer h.tailMu.Unlock()
	g := sub.g
	g.mu.Lock()
	delete(g.subs, sub)
	empty := len(g.subs) == 0
	g.mu.Unlock()
	if empty && h.tailGroups[g.key] == g {
		delete(h.tailGroups, g.key)
		g.stop()
	}
}

// scan runs g's query every tailEvery until ctx ends, within the query
// budget: a scan the budget cannot take now is tried again a second
// later; a failed one ends every tail of the group with its error.
func (h *Handler) scan(ctx context.Context, g *tailGroup) {
	tick := time.NewTicker(tailEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			g.end(nil)
			return
		case <-tick.C:
		}
		end := h.cfg.Now().Add(-g.key.delay)
		g.mu.Lock()
		from := g.from
		g.mu.Unlock()
		if !end.After(from) {
			continue
		}
		res, err := h.run(ctx, Query{Expr: g.lq, Tenant: g.key.tenant, Start: from, End: end, Limit: h.cfg.MaxLines, Forward: true})
		var be *querybudget.BusyError
		switch {
		case ctx.Err() != nil:
			g.end(nil)
			return
		case errors.As(err, &be):
			continue // the next second
		case err != nil:
			h.cfg.Logger.Warn("loki API: a live tail's query failed", "err", err)
			g.end(err)
			h.tailMu.Lock()
			if h.tailGroups[g.key] == g {
				delete(h.tailGroups, g.key)
			}
			h.tailMu.Unlock()
			return
		}
		_, next := tailMessageOf(res.Streams, false, from)
		g.mu.Lock()
		switch {
		case next.After(from):
			g.from = next
			for sub := range g.subs {
				select {
				case sub.ch <- res.Streams:
				default: // too slow: it is closed rather than sent a gap
					sub.err = errors.New("the tail's client reads too slowly")
					close(sub.ch)
					delete(g.subs, sub)
				}
			}
		case from.Before(end.Add(-time.Minute)):
			// Nothing new: look back a minute at most (for lines that
			// arrive a little late), not to the last one sent.
			g.from = end.Add(-time.Minute)
		}
		g.mu.Unlock()
	}
}

// end closes every subscription of g with err.
func (g *tailGroup) end(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for sub := range g.subs {
		sub.err = err
		close(sub.ch)
		delete(g.subs, sub)
	}
}
