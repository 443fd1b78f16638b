package lokipush

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// jsonPush is Loki's JSON push body; unknown keys are ignored. A stream
// is {"stream": {labels}, "values": [...]}, or in the older shape that
// python-logging-loki still sends by default, {"labels": "{a=\"b\"}",
// "entries": [{"ts": "<RFC 3339>", "line": "..."}]}.
type jsonPush struct {
	Streams []struct {
		Stream  map[string]string   `json:"stream"`
		Values  [][]json.RawMessage `json:"values"`
		Labels  *string             `json:"labels"`
		Entries []struct {
			TS   string `json:"ts"`
			Line string `json:"line"`
		} `json:"entries"`
	} `json:"streams"`
}

// JSON appends to dst the OTLP ExportLogsServiceRequest of the JSON push
// request js and returns it with what the push held. An error wrapping
// ErrMalformed leaves dst as it was. Decoding takes about four times the
// body's size in memory, besides the result (receivers reserve it).
func (d *Decoder) JSON(dst, js []byte) ([]byte, Stats, error) {
	d.start()
	var st Stats
	var req jsonPush
	if err := json.Unmarshal(js, &req); err != nil {
		return dst, st, malformed("JSON push request: %v", err)
	}
	base := len(dst)
	for si, s := range req.Streams {
		d.entries, d.meta, d.labels = d.entries[:0], d.meta[:0], d.labels[:0]
		for _, k := range slices.Sorted(maps.Keys(s.Stream)) {
			d.labels = append(d.labels, kv{[]byte(k), []byte(s.Stream[k])})
		}
		for vi, v := range s.Values {
			e, err := d.jsonEntry(v)
			if err != nil {
				return dst[:base], st, malformed("streams[%d].values[%d]: %v", si, vi, err)
			}
			d.entries = append(d.entries, e)
		}
		for ei, e := range s.Entries {
			ts, err := time.Parse(time.RFC3339Nano, e.TS)
			if err != nil {
				return dst[:base], st, malformed("streams[%d].entries[%d]: timestamp %.40q: want RFC 3339", si, ei, e.TS)
			}
			d.entries = append(d.entries, entry{ts: ts.UnixNano(), line: []byte(e.Line), m0: len(d.meta), m1: len(d.meta)})
		}
		st.Entries += len(d.entries)
		if s.Labels != nil && len(d.entries) > 0 {
			if !d.parseLabels([]byte(*s.Labels), &st) {
				continue
			}
		}
		var err error
		if dst, err = d.stream(dst, &st); err != nil {
			return dst[:base], st, err
		}
	}
	return dst, st, nil
}

// jsonEntry reads ["<unix ns>", "<line>"] or with a third element, an
// object of structured metadata, whose pairs go to d.meta.
func (d *Decoder) jsonEntry(v []json.RawMessage) (entry, error) {
	e := entry{m0: len(d.meta), m1: len(d.meta)}
	if len(v) != 2 && len(v) != 3 {
		return e, fmt.Errorf("an entry of %d elements: want a timestamp, a line and optional structured metadata", len(v))
	}
	var ts, line string
	if err := json.Unmarshal(v[0], &ts); err != nil {
		return e, fmt.Errorf("timestamp %.40s: want a string of Unix nanoseconds", v[0])
	}
	n, err := strconv.ParseInt(strings.TrimSpace(ts), 10, 64)
	if err != nil {
		return e, fmt.Errorf("timestamp %.40q: want Unix nanoseconds", ts)
	}
	if err := json.Unmarshal(v[1], &line); err != nil {
		return e, fmt.Errorf("line: want a string")
	}
	e.ts, e.line = n, []byte(line)
	if len(v) == 3 {
		var md map[string]string
		if err := json.Unmarshal(v[2], &md); err != nil {
			return e, fmt.Errorf("structured metadata: want an object of string values")
		}
		for _, k := range slices.Sorted(maps.Keys(md)) {
			d.meta = append(d.meta, kv{[]byte(k), []byte(md[k])})
		}
		e.m1 = len(d.meta)
	}
	return e, nil
}
