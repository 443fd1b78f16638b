package lakeread

import (
	"context"
	"fmt"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// LogCountQuery selects log records for CountLogs as LogQuery does, and
// says how to tally them.
type LogCountQuery struct {
	// Start, End, Service and Contains select records as LogQuery's.
	Start, End time.Time
	Service    func(string) bool
	Contains   [][]byte
	// Bucket maps a record's time to its bucket's (any int64 the caller
	// chooses, e.g. the end of the step interval holding it): records
	// are counted per bucket. It must not be nil.
	Bucket func(t int64) int64
}

// LogCount is how many records of a service and severity fell in a
// bucket.
type LogCount struct {
	Service        string
	SeverityText   string
	SeverityNumber int32
	Bucket         int64
	N              int64
}

// countKey is a tally's key: the service's and severity text's indexes
// in the tally's names, the severity number and the bucket.
type countKey struct {
	svc, text, num int32
	bucket         int64
}

// tally counts records by service, severity and bucket, interning names.
type tally struct {
	names     []string
	nameBytes int64
	index     map[string]int32
	counts    map[countKey]int64
}

func newTally() *tally {
	return &tally{index: map[string]int32{}, counts: map[countKey]int64{}}
}

// name returns b's index in t.names, adding it once.
func (t *tally) name(b []byte) int32 {
	if i, ok := t.index[string(b)]; ok {
		return i
	}
	s := string(b)
	t.nameBytes += int64(len(s))
	i := int32(len(t.names))
	t.names = append(t.names, s)
	t.index[s] = i
	return i
}

// CountLogs counts the log records of tenant that q selects (the lake's
// files and the spool's records not in files yet, as Logs reads them) by
// service, severity and q.Bucket of their time, and calls fn with each
// non-zero count, in no order; fn returns false to stop. It reads the
// time, service, severity and (for Contains) body columns alone and
// decodes no record: what a volume or count query needs. The bytes read
// are bounded as Logs' are; the tally's memory is charged to the query's
// ticket.
func (r *Reader) CountLogs(ctx context.Context, tenant string, q LogCountQuery, fn func(LogCount) bool) error {
	if q.Start.IsZero() || q.End.IsZero() || q.Bucket == nil {
		return fmt.Errorf("lakeread: a logs count needs a start, an end and a bucket")
	}
	fq := r.newQuery(tenant, q.Start, q.End)
	fq.signal = otlpwire.SignalLogs
	tk := querybudget.FromContext(ctx)
	t := newTally()
	var charged int64
	defer func() { tk.Release(charged) }()
	// charge charges the tally's growth: a map entry and a name's bytes,
	// roughly.
	charge := func() error {
		n := int64(len(t.counts))*48 + int64(len(t.names))*32 + t.nameBytes
		if n <= charged {
			return nil
		}
		if err := tk.Charge(n - charged); err != nil {
			return err
		}
		charged = n
		return nil
	}
	lq := LogQuery{Start: q.Start, End: q.End, Service: q.Service, Contains: q.Contains, Fields: FieldSeverity}
	err := fq.fresh(ctx, func(p []byte) error {
		return freshLogs(p, &lq, func(rec *LogRecord) {
			k := countKey{svc: t.name([]byte(rec.Service)), text: t.name([]byte(rec.SeverityText)), num: rec.SeverityNumber, bucket: q.Bucket(rec.Time)}
			t.counts[k]++
		})
	})
	if err != nil {
		return err
	}
	if err := charge(); err != nil {
		return err
	}
	files, err := fq.list(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := r.countFile(ctx, fq, f, &q, t); err != nil {
			return err
		}
		if err := fq.charge(); err != nil {
			return err
		}
		if err := charge(); err != nil {
			return err
		}
	}
	for k, n := range t.counts {
		if !fn(LogCount{Service: t.names[k.svc], SeverityText: t.names[k.text], SeverityNumber: k.num, Bucket: k.bucket, N: n}) {
			return nil
		}
	}
	return nil
}

// countFile adds the records of file f that q selects to t.
func (r *Reader) countFile(ctx context.Context, fq *fileQuery, f lake.DataFile, q *LogCountQuery, t *tally) (err error) {
	cf, err := fq.open(ctx, f)
	if err != nil || cf == nil {
		return err // nil: removed since the listing
	}
	defer fq.release(cf)
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("lakeread: read a logs file: %s: damaged file: %v", f.Name, p)
		}
	}()
	pf := cf.pf
	if v, ok := pf.Lookup(lake.SchemaVersionKey); !ok || v != "2" {
		return nil // version 1 logs are not read by this API
	}
	if err := countRowGroups(pf, q, t); err != nil {
		return fmt.Errorf("lakeread: %s: %w", f.Name, err)
	}
	return nil
}

// countRowGroups adds the records of pf that q selects to t, row group by
// row group, reading the filter columns first, then time and severity of
// the rows they keep.
func countRowGroups(pf *parquet.File, q *LogCountQuery, t *tally) error {
	leaves, err := leavesOf(pf, logCols)
	if err != nil {
		return err
	}
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	var (
		times []int64 // by row of the row group; 0: not selected
		svcs  []int32
		texts []int32
		nums  []int32
	)
	for _, rg := range pf.RowGroups() {
		sel, none, err := filterRows(rg, leaves, &LogQuery{Service: q.Service, Contains: q.Contains})
		if err != nil {
			return err
		}
		if none {
			continue
		}
		n := int(rg.NumRows())
		times, svcs, texts, nums = resize(times, n), resize(svcs, n), resize(texts, n), resize(nums, n)
		clear(times)
		clear(nums)
		for i := range texts {
			texts[i], svcs[i] = -1, -1
		}
		var zero []int64
		err = eachInt(rg, leaves[lcTime], sel, func(row int64, v int64) {
			if v != 0 {
				times[row] = v
			} else {
				zero = append(zero, row)
			}
		})
		if err == nil && len(zero) > 0 {
			err = eachInt(rg, leaves[lcObserved], zero, func(row int64, v int64) { times[row] = v })
		}
		if err == nil {
			err = eachString(rg, leaves[lcService], sel, func(row int64, b []byte) { svcs[row] = t.name(b) })
		}
		if err == nil {
			err = eachString(rg, leaves[lcSeverityText], sel, func(row int64, b []byte) { texts[row] = t.name(b) })
		}
		if err == nil {
			err = eachInt(rg, leaves[lcSeverityNumber], sel, func(row int64, v int64) { nums[row] = int32(v) })
		}
		if err != nil {
			return err
		}
		empty, unknown := t.name(nil), t.name([]byte("unknown_service"))
		add := func(row int64) {
			ts := times[row]
			if ts < lo || ts >= hi {
				return
			}
			k := countKey{svc: svcs[row], text: texts[row], num: nums[row], bucket: q.Bucket(ts)}
			if k.svc < 0 {
				k.svc = unknown
			}
			if k.text < 0 {
				k.text = empty
			}
			t.counts[k]++
		}
		if sel == nil {
			for row := range int64(n) {
				add(row)
			}
		} else {
			for _, row := range sel {
				add(row)
			}
		}
	}
	return nil
}

// resize returns s with length n, reusing its array when it is large
// enough.
func resize[T any](s []T, n int) []T {
	if cap(s) >= n {
		return s[:n]
	}
	return make([]T, n)
}
