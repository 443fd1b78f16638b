package lokipush

import (
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"google.golang.org/protobuf/encoding/protowire"
)

// Push protobuf field numbers (pkg/push's push.proto).
const (
	fPushStreams    = 1
	fStreamLabels   = 1
	fStreamEntries  = 2
	fEntryTimestamp = 1
	fEntryLine      = 2
	fEntryMetadata  = 3
	fTSSeconds      = 1
	fTSNanos        = 2
	fPairName       = 1
	fPairValue      = 2
)

// Proto appends to dst the OTLP ExportLogsServiceRequest of the push
// request pb (protobuf, snappy already decoded) and returns it with what
// the push held. The result's bytes alias pb (lines, metadata): pb must
// outlive it. An error wrapping ErrMalformed leaves dst as it was.
func (d *Decoder) Proto(dst, pb []byte) ([]byte, Stats, error) {
	d.start()
	var st Stats
	base := len(dst)
	for len(pb) > 0 {
		num, typ, n := protowire.ConsumeTag(pb)
		if n < 0 {
			return dst[:base], st, malformed("push request: %v", protowire.ParseError(n))
		}
		pb = pb[n:]
		if num != fPushStreams || typ != protowire.BytesType {
			if n = protowire.ConsumeFieldValue(num, typ, pb); n < 0 {
				return dst[:base], st, malformed("push request: %v", protowire.ParseError(n))
			}
			pb = pb[n:]
			continue
		}
		s, n := protowire.ConsumeBytes(pb)
		if n < 0 {
			return dst[:base], st, malformed("push request: %v", protowire.ParseError(n))
		}
		pb = pb[n:]
		if err := d.readStream(s, &st); err != nil {
			return dst[:base], st, err
		}
		var err error
		if dst, err = d.stream(dst, &st); err != nil {
			return dst[:base], st, err
		}
	}
	return dst, st, nil
}

// readStream reads a StreamAdapter into d.labels and d.entries.
func (d *Decoder) readStream(b []byte, st *Stats) error {
	d.entries, d.meta, d.labels = d.entries[:0], d.meta[:0], d.labels[:0]
	var labelText []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed("stream: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fStreamLabels && typ == protowire.BytesType:
			labelText, n = protowire.ConsumeBytes(b)
		case num == fStreamEntries && typ == protowire.BytesType:
			var e []byte
			if e, n = protowire.ConsumeBytes(b); n >= 0 {
				if err := d.readEntry(e); err != nil {
					return err
				}
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return malformed("stream: %v", protowire.ParseError(n))
		}
		b = b[n:]
	}
	st.Entries += len(d.entries)
	if len(d.entries) > 0 {
		d.parseLabels(labelText, st)
	}
	return nil
}

// parseLabels reads Loki's text form of a stream's labels into d.labels,
// sorted by name; if they do not parse, the stream's entries are refused
// and dropped, and it returns false.
func (d *Decoder) parseLabels(text []byte, st *Stats) bool {
	ls, err := d.parser.ParseMetric(string(text))
	if err != nil {
		st.refuse(len(d.entries), "invalid_labels: stream labels %.256q do not parse: %s", text, strings.ReplaceAll(err.Error(), "\n", "; "))
		d.entries = d.entries[:0]
		return false
	}
	ls.Range(func(l labels.Label) {
		d.labels = append(d.labels, kv{[]byte(l.Name), []byte(l.Value)})
	})
	slices.SortStableFunc(d.labels, func(a, b kv) int { return strings.Compare(string(a.k), string(b.k)) })
	return true
}

// readEntry appends an EntryAdapter to d.entries.
func (d *Decoder) readEntry(b []byte) error {
	e := entry{m0: len(d.meta)}
	var sec, nsec int64
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return malformed("entry: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fEntryTimestamp && typ == protowire.BytesType:
			var ts []byte
			if ts, n = protowire.ConsumeBytes(b); n >= 0 {
				var err error
				if sec, nsec, err = readTimestamp(ts); err != nil {
					return err
				}
			}
		case num == fEntryLine && typ == protowire.BytesType:
			e.line, n = protowire.ConsumeBytes(b)
		case num == fEntryMetadata && typ == protowire.BytesType:
			var p []byte
			if p, n = protowire.ConsumeBytes(b); n >= 0 {
				pair, err := readPair(p)
				if err != nil {
					return err
				}
				d.meta = append(d.meta, pair)
			}
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return malformed("entry: %v", protowire.ParseError(n))
		}
		b = b[n:]
	}
	e.ts = timestamp(sec, nsec)
	e.m1 = len(d.meta)
	d.entries = append(d.entries, e)
	return nil
}

// timestamp is sec seconds and nsec nanoseconds as Unix nanoseconds,
// saturated at the ends of int64 (out of any range then).
func timestamp(sec, nsec int64) int64 {
	const maxSec = (1<<63-1)/int64(1e9) - 1
	switch {
	case sec > maxSec:
		return 1<<63 - 1
	case sec < -maxSec:
		return -1 << 63
	}
	return sec*1e9 + nsec
}

func readTimestamp(b []byte) (sec, nsec int64, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return 0, 0, malformed("timestamp: %v", protowire.ParseError(n))
		}
		b = b[n:]
		var v uint64
		switch {
		case num == fTSSeconds && typ == protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
			sec = int64(v)
		case num == fTSNanos && typ == protowire.VarintType:
			v, n = protowire.ConsumeVarint(b)
			nsec = int64(int32(v))
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return 0, 0, malformed("timestamp: %v", protowire.ParseError(n))
		}
		b = b[n:]
	}
	if nsec < 0 || nsec >= 1e9 {
		return 0, 0, malformed("timestamp: nanos %d out of [0, 1e9)", nsec)
	}
	return sec, nsec, nil
}

func readPair(b []byte) (kv, error) {
	var p kv
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return p, malformed("structured metadata: %v", protowire.ParseError(n))
		}
		b = b[n:]
		switch {
		case num == fPairName && typ == protowire.BytesType:
			p.k, n = protowire.ConsumeBytes(b)
		case num == fPairValue && typ == protowire.BytesType:
			p.v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return p, malformed("structured metadata: %v", protowire.ParseError(n))
		}
		b = b[n:]
	}
	return p, nil
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}
