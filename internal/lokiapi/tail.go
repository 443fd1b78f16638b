package lokiapi

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/wirehouse/wirehouse/internal/logql"
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
func (h *Handler) tail(w http.ResponseWriter, r *http.Request) {
	t, err := h.tenantOf(r)
	var lq *logql.LogQuery
	if err == nil {
		var e logql.Expr
		if e, err = logql.Parse(r.FormValue("query")); err == nil {
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
		h.fail(w, r, err)
		return
	}
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
	for first := true; ; first = false {

		end := h.cfg.Now().Add(-delay)
		if end.After(from) {
			q := Query{Expr: lq, Tenant: t, Start: from, End: end, Limit: h.cfg.MaxLines, Forward: true}
			if first {
				q.Limit, q.Forward = limit, false // the newest limit lines
			}
			qctx, qcancel := context.WithTimeout(ctx, h.cfg.Timeout)
			res, err := h.eng.Exec(qctx, q)
			qcancel()
			if err != nil {
				if ctx.Err() == nil {
					conn.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseInternalServerErr, err.Error())) //nolint:errcheck
				}
				return
			}
			msg := tailMessage{Streams: []tailStream{}}
			newest := from
			for _, s := range res.Streams {
				ts := tailStream{Stream: s.Labels.Map()}
				for i := range s.Entries {
					e := s.Entries[i]
					if !q.Forward { // the first query's, newest first
						e = s.Entries[len(s.Entries)-1-i]
					}
					ts.Values = append(ts.Values, [2]string{strconv.FormatInt(e.Time, 10), e.Line})
					if t := time.Unix(0, e.Time); !t.Before(newest) {
						newest = t.Add(1)
					}
				}
				msg.Streams = append(msg.Streams, ts)
			}
			if len(msg.Streams) > 0 {
				if err := conn.WriteJSON(msg); err != nil {
					return
				}
			}
			switch {
			case len(msg.Streams) > 0:
				from = newest
			case from.Before(end.Add(-time.Minute)):
				// Nothing new: look back a minute at most (for lines
				// that arrive a little late), not to the last one sent.
				from = end.Add(-time.Minute)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(tailEvery):
		}
	}
}
