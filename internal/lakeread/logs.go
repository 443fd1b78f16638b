package lakeread

import (
	"bytes"
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/querybudget"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// LogRecord is a log record read back from the lake or the spool, with
// every value as text.
type LogRecord struct {
	Time           int64  // ns since the epoch: its time, else its observed time
	Line           []byte // the body: a string as is, another value as JSON
	Service        string // service.name, else unknown_service
	Resource       []KV   // resource attributes
	ScopeName      string
	ScopeVersion   string
	SeverityText   string
	SeverityNumber int32
	TraceID        string // hex, "" when absent
	SpanID         string
	Attrs          []KV // the record's attributes
}

// KV is an attribute as text (lake.AppendValueText).
type KV struct{ Key, Value string }

// LogQuery selects log records for Logs.
type LogQuery struct {
	// Start and End bound the records' times: [Start, End). Both must be
	// set.
	Start, End time.Time
	// Service, if set, keeps the records of the services it accepts; it
	// is called once per distinct name.
	Service func(string) bool
	// Contains are strings every kept record's line holds (LogQL's |=
	// filters), tested on the body column before anything else is read.
	Contains [][]byte
	// Matches are regular expressions every kept record's line matches
	// (LogQL's |~ filters), tested on the body column after Contains;
	// the literals every match holds are tested first (requiredLiterals).
	Matches []*regexp.Regexp
	// AttrValues are values every kept record has as the value of one
	// of its attributes, the record's or the resource's (an int's value
	// as its decimal text): a prefilter for LogQL's label filters
	// name="v" on attributes, tested on the attribute columns of the
	// files (not on the spool's records), which may keep a record whose
	// value is under another key; the caller tests the label.
	AttrValues []string
	// AttrNames, if set, are the label names of AttrValues, one each,
	// and AttrLabel gives an attribute key's label name: a key column
	// (schema version 3) is tested for value i only if AttrLabel of its
	// key is AttrNames[i] (the map and the resource are tested for every
	// value). Unset, every key column is tested for every value.
	AttrNames []string
	AttrLabel func(key string) string
	// Fields are the fields of LogRecord to fill besides Time and
	// Service (0: all of them): a query that needs few reads few columns.
	Fields LogFields
	// Newest, if positive, makes Logs give the records newest first, and
	// Oldest oldest first; Logs then decodes them in batches, in that
	// order, so that a caller that stops after its limit reads little.
	// Neither: any order.
	Newest, Oldest bool
	// Limit, if positive, is how many records the caller takes before it
	// may stop: Logs reads ahead of fn (the next files while fn works on
	// a batch) until it has handed over that many, then waits for fn to
	// have seen them before it reads on, so that a caller that stops at
	// its limit does not have the next files read for nothing.
	Limit int

	// literals are, for each of Matches, the substrings every match of
	// it holds (requiredLiterals), set by Logs: tested before the
	// expression, and used as needles by the body index.
	literals [][][]byte
	// within, if set, keeps only the rows whose timestamp column value
	// lies in one of its ranges [min, max] (sorted, disjoint): the
	// blocks of a file whose body index may hold the needles.
	within [][2]int64
	// withinRows is the rows of those blocks.
	withinRows int64
	// needles are the gram hashes of the needles (gramNeedles), worked
	// out once a query, not once a file; needlesSet says they are.
	needles    [][]uint64
	needlesSet bool
	// resLabels, if set, are the labels (AttrLabel) of every key of the
	// file's resources: value i is looked for in the resources' JSON only
	// if AttrNames[i] is one of them.
	resLabels map[string]bool
}

// LogFields are fields of a LogRecord, for LogQuery.Fields.
type LogFields uint8

const (
	FieldLine     LogFields = 1 << iota // Line
	FieldResource                       // Resource
	FieldScope                          // ScopeName, ScopeVersion
	FieldSeverity                       // SeverityText, SeverityNumber
	FieldIDs                            // TraceID, SpanID
	FieldAttrs                          // Attrs
	AllLogFields  = FieldLine | FieldResource | FieldScope | FieldSeverity | FieldIDs | FieldAttrs
)

// logCols are the fixed columns of a logs file (versions 2 and 3) Logs
// reads; a version-3 file's key columns are found by keyLeaves.
var logCols = []string{"timestamp", "observed_timestamp", "service_name", "body", "severity_text", "severity_number",
	"trace_id", "span_id", "scope_name", "scope_version", "resource_attributes",
	"attributes.key_value.key", "attributes.key_value.value"}

const (
	lcTime = iota
	lcObserved
	lcService
	lcBody
	lcSeverityText
	lcSeverityNumber
	lcTraceID
	lcSpanID
	lcScopeName
	lcScopeVersion
	lcResource
	lcAttrKey
	lcAttrValue
)

// logBatch is how many records Logs decodes at a time in order, at
// first (fileBatch in no order); each later batch is twice as large, up
// to maxLogBatch, while the last one held at most half of maxBatchBytes,
// and half as large when it held more than maxBatchBytes: a query's
// memory holds a batch at a time, whatever its records' size.
const (
	logBatch      = 1000
	fileBatch     = 8192
	maxLogBatch   = 1 << 16
	maxBatchBytes = 16 << 20
)

// Logs calls fn with the log records of tenant that q selects: from the
// lake's files (schema version 2; the hours that overlap [Start, End),
// newest first), then the spool's records not yet in files; fn returns
// false to stop. Filters on time, service and line are tested on their
// columns before the rest of a record is read. The bytes read are bounded
// as for traces.
func (r *Reader) Logs(ctx context.Context, tenant string, q LogQuery, fn func(*LogRecord) bool) error {
	if q.Start.IsZero() || q.End.IsZero() {
		return fmt.Errorf("lakeread: a logs query needs a start and an end")
	}
	fq := r.newQuery(tenant, q.Start, q.End)
	fq.signal = otlpwire.SignalLogs
	q.literals = make([][][]byte, len(q.Matches))
	for i, re := range q.Matches {
		q.literals[i] = requiredLiterals(re)
	}
	// The spool's first: the newest records are there, and the high-water
	// mark tells which files hold what they hold.
	// The memory the query holds is charged to its ticket (querybudget)
	// while it holds it: the spool's records it selected, an hour's
	// candidates, a decoded batch.
	tk := querybudget.FromContext(ctx)
	var fresh []*LogRecord
	var freshBytes int64
	defer func() { tk.Release(freshBytes) }()
	// A query in no order takes the spool's records as they are read:
	// none is held.
	unordered, stopped := !q.Newest && !q.Oldest, false
	err := fq.fresh(ctx, func(p []byte) error {
		var cerr error
		err := freshLogs(p, &q, func(rec *LogRecord) {
			if unordered {
				stopped = stopped || !fn(rec)
				return
			}
			fresh = append(fresh, rec)
			n := recordBytes(rec)
			if cerr == nil {
				if cerr = tk.Charge(n); cerr == nil {
					freshBytes += n
				}
			}
		})
		if stopped {
			return errStopped
		}
		return cmp.Or(cerr, err)
	})
	if errors.Is(err, errStopped) {
		return nil
	}
	if err != nil {
		return err
	}
	files, err := fq.list(ctx)
	if err != nil {
		return err
	}
	// By hour: the newest (or oldest) first; a query in order reads one
	// hour's candidates at a time.
	hours := map[int64][]lake.DataFile{}
	var order []int64
	for _, f := range files {
		h := f.Hour.Unix()
		if hours[h] == nil {
			order = append(order, h)
		}
		hours[h] = append(hours[h], f)
	}
	freshByHour := map[int64][]*LogRecord{}
	for _, rec := range fresh {
		h := time.Unix(0, rec.Time).UTC().Truncate(time.Hour).Unix()
		if freshByHour[h] == nil && hours[h] == nil {
			order = append(order, h)
		}
		freshByHour[h] = append(freshByHour[h], rec)
	}
	slices.Sort(order)
	if !q.Oldest {
		slices.Reverse(order)
	}
	given := 0 // records handed to fn, for Limit
	count := func(rec *LogRecord) bool { given++; return fn(rec) }
	for _, h := range order {
		hq := q
		if q.Limit > 0 {
			hq.Limit = max(1, q.Limit-given) // what the caller may take yet
		}
		more, err := r.logsOfHour(ctx, fq, &hq, hours[h], freshByHour[h], count)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// errStopped ends a walk over the spool's records when the caller has
// what it wants.
var errStopped = errors.New("stopped")

// recordBytes estimates the memory a decoded record holds, for the
// query's ticket. Its Resource is shared with the other records of its
// resource (decodeLogs parses each distinct one once, freshLogs once a
// ResourceLogs): not counted.
func recordBytes(r *LogRecord) int64 {
	n := int(unsafe.Sizeof(LogRecord{})) + len(r.Line) + len(r.Service) + len(r.ScopeName) + len(r.ScopeVersion) +
		len(r.SeverityText) + len(r.TraceID) + len(r.SpanID)
	for _, kv := range r.Attrs {
		n += int(unsafe.Sizeof(kv)) + len(kv.Key) + len(kv.Value)
	}
	return int64(n)
}

// candidate is a record a query selects, before it is decoded: its time
// and where it is, in 16 bytes (a query in order holds one per record of
// an hour that passes the column filters).
type candidate struct {
	time int64
	at   uint64 // file<<48 | row group<<32 | row; file freshFile: fresh[row]
}

// freshFile is a candidate's file when it is a spool record.
const freshFile = 1<<16 - 1

func fileCandidate(t int64, file, rg int, row int64) candidate {
	return candidate{t, uint64(file)<<48 | uint64(rg)<<32 | uint64(row)}
}

func (c candidate) file() int  { return int(c.at >> 48) }
func (c candidate) rg() int    { return int(c.at >> 32 & (1<<16 - 1)) }
func (c candidate) row() int64 { return int64(c.at & (1<<32 - 1)) }

// logsOfHour gives the records of one hour partition: the candidates of
// its files (filtered on columns) and its fresh records, in order if the
// query asks, decoded batch by batch.
func (r *Reader) logsOfHour(ctx context.Context, fq *fileQuery, q *LogQuery, files []lake.DataFile, fresh []*LogRecord, fn func(*LogRecord) bool) (more bool, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("lakeread: read a logs file: damaged file: %v", p)
		}
	}()
	tk := querybudget.FromContext(ctx)
	var cands []candidate
	var candBytes int64 // charged for cands' capacity
	defer func() { tk.Release(candBytes) }()
	var chargeErr error
	// grown charges cands' capacity when it grew.
	grown := func() {
		if n := int64(cap(cands)) * int64(unsafe.Sizeof(candidate{})); n > candBytes && chargeErr == nil {
			if chargeErr = tk.Charge(n - candBytes); chargeErr == nil {
				candBytes = n
			}
		}
	}
	for _, rec := range fresh {
		cands = append(cands, candidate{rec.Time, freshFile<<48 | uint64(len(cands))})
	}
	grown()
	type openFile struct {
		f    lake.DataFile
		pf   *parquet.File
		cf   *cachedFile
		done func()
	}
	var opened []openFile
	defer func() {
		for _, o := range opened {
			o.done()
		}
	}()
	// The decoded records go to fn on a goroutine of their own
	// (delivery), so that the next files are filtered and decoded while
	// fn (a query's pipeline, serial) works on a batch: on one service's
	// sparse records fn was a fifth of the query's time, with one core
	// idle. At most one batch waits for it; a batch's bytes stay charged
	// until fn has seen it. Before logsOfHour returns the goroutine is
	// done, so the caller sees fn's calls in order and ended.
	d := startDelivery(tk, fn)
	defer func() {
		stopped, perr := d.finish()
		if err == nil && perr != nil {
			err = perr
		}
		if stopped {
			more = false
		}
	}()
	emit := func(cands []candidate) (bool, error) {
		size := logBatch
		if !q.Newest && !q.Oldest {
			size = fileBatch // in file order
		}
		var lastHeld int64 // the bytes of the last batch's records
		for start := 0; start < len(cands); start += size {
			if start > 0 {
				// A caller that did not stop after a batch reads on: in
				// time order a batch reads pages for few of their rows,
				// so larger ones read each page fewer times; within
				// maxBatchBytes.
				switch {
				case lastHeld > maxBatchBytes:
					size = max(logBatch, size/2)
				case 2*lastHeld <= maxBatchBytes:
					size = min(2*size, maxLogBatch)
				}
			}
			if err := ctx.Err(); err != nil {
				return false, err
			}
			if d.caughtUp(q.Limit) {
				return false, nil
			}
			batch := cands[start:min(start+size, len(cands))]
			recs := make([]*LogRecord, len(batch))
			// Decode the batch file by file and row group by row group.
			type at struct{ file, rg int }
			rows := map[at][]int{} // indexes into batch
			for i, c := range batch {
				if c.file() == freshFile {
					recs[i] = fresh[c.row()]
					continue
				}
				k := at{c.file(), c.rg()}
				rows[k] = append(rows[k], i)
			}
			// Files in parallel (one a core), each file's row groups in
			// turn; each call fills only its rows of recs.
			byFile := map[int][]at{}
			for k := range rows {
				byFile[k.file] = append(byFile[k.file], k)
			}
			fileIDs := slices.Sorted(maps.Keys(byFile))
			err := inParallel(len(fileIDs), func(n int) error {
				file := fileIDs[n]
				// The file's columns, found once for all its row groups.
				leaves, err := leavesOf(opened[file].pf, logCols)
				var keys []keyLeaf
				if err == nil {
					keys, err = opened[file].cf.keyLeaves()
				}
				if err != nil {
					return fmt.Errorf("lakeread: %s: %w", opened[file].f.Name, err)
				}
				for _, k := range byFile[file] {
					idx := rows[k]
					slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(batch[a].row(), batch[b].row()) })
					sel := make([]int64, len(idx))
					for j, i := range idx {
						sel[j] = batch[i].row()
					}
					pf := opened[file].pf
					rg := pf.RowGroups()[k.rg]
					if len(sel) <= pointRows {
						rg = r.chunks.dictionaryRowGroup(rg) // a point read: its dictionaries from the cache
					}
					decoded, err := decodeLogs(rg, leaves, keys, sel, q.Fields)
					if err != nil {
						return fmt.Errorf("lakeread: %s: %w", opened[file].f.Name, err)
					}
					for j, i := range idx {
						recs[i] = decoded[j]
					}
				}
				return nil
			})
			if err != nil {
				return false, err
			}
			if err := fq.charge(); err != nil {
				return false, err
			}
			var held int64
			for i, rec := range recs {
				if batch[i].file() != freshFile {
					held += recordBytes(rec)
				}
			}
			lastHeld = held
			if err := tk.Charge(held); err != nil {
				return false, err
			}
			if !d.send(recs, held) {
				return false, nil
			}
		}
		return true, nil
	}
	// Every file is opened and its filters set first (the grams region
	// may skip it unopened; its counts may put it out of range), with
	// the bounds of its selected records' times (fileBounds).
	type job struct {
		file   int
		q      *LogQuery
		lo, hi int64
	}
	var all []job
	for _, f := range files {
		// The grams region, when the needles are long enough,
		// tells whether the file is to be opened at all.
		pre, err := r.gramsFirst(ctx, fq, f, q)
		if err != nil {
			return false, err
		}
		if pre.skip {
			continue
		}
		cf, err := fq.open(ctx, f)
		if err != nil {
			return false, err
		}
		if cf == nil {
			continue // removed since the listing
		}
		i := len(opened)
		opened = append(opened, openFile{f, cf.pf, cf, func() { fq.release(cf) }})
		if !logsFile(cf.pf) {
			continue // version 1 logs are not read by this API
		}
		if i >= freshFile || len(cf.pf.RowGroups()) >= 1<<16 {
			return false, fmt.Errorf("lakeread: over %d files in the hour of %s, or row groups in it: compact the lake", freshFile, f.Name)
		}
		c := cf.logCounts()
		if r.cfg.NoIndexes {
			c = nil
		}
		if c != nil && noneInRange(c, q.Start.UnixNano(), q.End.UnixNano(), q.Service) {
			continue // no record in range
		}
		fileQ, skip := q, false
		if pre.ok {
			fileQ = pre.q
		} else if g := cf.logGrams(); g != nil && !r.cfg.NoIndexes {
			fileQ, skip = narrowByGrams(g, q)
		}
		if !skip && len(q.AttrNames) == len(q.AttrValues) && len(q.AttrNames) > 0 && q.AttrLabel != nil {
			// The resources' JSON is searched only for the values under a
			// label one of its keys has.
			if keys, ok := cf.resourceKeys(); ok {
				narrowed := *fileQ
				narrowed.resLabels = make(map[string]bool, len(keys))
				for k := range keys {
					narrowed.resLabels[q.AttrLabel(k)] = true
				}
				fileQ = &narrowed
			}
		}
		if !skip {
			lo, hi := fileBounds(c, q.Service)
			all = append(all, job{i, fileQ, lo, hi})
		}
	}
	// In order, the files whose records may come first are read first,
	// and after each few files the candidates no file left to read can
	// precede are given out: a query that stops at its limit reads the
	// newest (or oldest) files of the hour alone.
	switch {
	case q.Newest:
		slices.SortStableFunc(all, func(a, b job) int { return cmp.Compare(b.hi, a.hi) })
	case q.Oldest:
		slices.SortStableFunc(all, func(a, b job) int { return cmp.Compare(a.lo, b.lo) })
	}
	// Files are filtered a few at a time (filesAtOnce), one a core
	// (inParallel); in order, a core's worth at first, then twice as
	// many each time up to filesAtOnce, so that a query that stops soon
	// reads few files.
	w, most := filesAtOnce(), filesAtOnce()
	if q.Newest || q.Oldest {
		w = workers()
	}
	for start := 0; start < len(all); start, w = start+w, min(2*w, most) {
		if d.caughtUp(q.Limit) {
			return false, nil
		}
		jobs := all[start:min(start+w, len(all))]
		// At most a candidate per row: cands grows once by the files'
		// rows, and each worker appends into its file's stretch of it;
		// the stretches are then closed up, in the files' order. A file
		// the body index narrowed to a few blocks (point) appends to a
		// slice of its own instead, added after the others: its
		// stretch would be cleared for rows it never reads.
		point := func(q *LogQuery) bool { return q.within != nil && q.withinRows <= pointScanRows }
		need := 0
		for _, jb := range jobs {
			if !point(jb.q) {
				need += int(opened[jb.file].pf.NumRows())
			}
		}
		cands = slices.Grow(cands, need)
		if grown(); chargeErr != nil {
			return false, chargeErr
		}
		base := len(cands)
		region := cands[base : base+need]
		per := make([][]candidate, len(jobs))
		off := 0
		for j, jb := range jobs {
			if !point(jb.q) {
				n := int(opened[jb.file].pf.NumRows())
				per[j] = region[off : off : off+n]
				off += n
			}
		}
		err := inParallel(len(jobs), func(j int) error {
			o := opened[jobs[j].file]
			room := cap(per[j])
			var wrap func(parquet.RowGroup) parquet.RowGroup
			if point(jobs[j].q) {
				room = int(o.pf.NumRows())
				wrap = r.chunks.dictionaryRowGroup // a few blocks: mostly dictionaries, kept by the cache
			}
			err := logCandidates(o.cf, jobs[j].q, wrap, func(rg int, row, t int64) {
				if len(per[j]) < room {
					per[j] = append(per[j], fileCandidate(t, jobs[j].file, rg, row))
				}
			})
			if err != nil {
				return fmt.Errorf("lakeread: %s: %w", o.f.Name, err)
			}
			return nil
		})
		if err != nil {
			return false, err
		}
		end := base
		for j, p := range per {
			if !point(jobs[j].q) {
				end += copy(cands[end:base+need], p) // never ahead of p: same array, p at or after end
			}
		}
		cands = cands[:end]
		for j, p := range per {
			if point(jobs[j].q) {
				cands = append(cands, p...)
			}
		}
		if grown(); chargeErr != nil {
			return false, chargeErr
		}
		if !q.Newest && !q.Oldest {
			// No order: these files' records now, so that memory holds
			// a few files' candidates at most.
			if more, err := emit(cands); err != nil || !more {
				return more, err
			}
			cands = cands[:0]
			continue
		}
		if start+w >= len(all) {
			break
		}
		// The candidates no later file can precede, in order.
		next := all[start+w]
		sortCandidates(cands, q.Newest)
		k, _ := slices.BinarySearchFunc(cands, next, func(c candidate, nx job) int {
			if q.Newest {
				return cmp.Compare(nx.hi, c.time) // those after next.hi first
			}
			return cmp.Compare(c.time, nx.lo)
		})
		if k > 0 {
			if more, err := emit(cands[:k]); err != nil || !more {
				return more, err
			}
			cands = cands[:copy(cands, cands[k:])]
		}
	}
	if q.Newest || q.Oldest {
		sortCandidates(cands, q.Newest)
	}
	return emit(cands)
}

// delivery calls fn with batches of records on a goroutine of its own,
// in the order they are sent, releasing each batch's bytes from tk once
// fn has seen it; after fn returns false it calls it no more.
type delivery struct {
	tk       *querybudget.Ticket
	fn       func(*LogRecord) bool
	batches  chan deliveryBatch
	done     chan struct{}
	stopped  atomic.Bool
	sent     int   // records sent; the sender's alone
	panicked error // set by the goroutine, read after done
}

// A deliveryBatch is records for fn, or (seen set) a mark closed once fn
// has seen every batch sent before it.
type deliveryBatch struct {
	recs []*LogRecord
	held int64
	seen chan struct{}
}

func startDelivery(tk *querybudget.Ticket, fn func(*LogRecord) bool) *delivery {
	d := &delivery{tk: tk, fn: fn, batches: make(chan deliveryBatch, 1), done: make(chan struct{})}
	go d.run()
	return d
}

func (d *delivery) run() {
	defer close(d.done)
	defer func() {
		if p := recover(); p != nil {
			d.panicked = fmt.Errorf("lakeread: a log record's consumer panicked: %v", p)
			d.stopped.Store(true)
			for b := range d.batches { // the sender is not left blocked
				d.tk.Release(b.held)
				if b.seen != nil {
					close(b.seen)
				}
			}
		}
	}()
	for b := range d.batches {
		for _, rec := range b.recs {
			if d.stopped.Load() || !d.fn(rec) {
				d.stopped.Store(true)
				break
			}
		}
		d.tk.Release(b.held)
		if b.seen != nil {
			close(b.seen)
		}
	}
}

// caughtUp waits for fn to have seen every batch sent, once limit (if
// positive) records were sent, and says whether fn asked to stop.
func (d *delivery) caughtUp(limit int) (stopped bool) {
	if limit <= 0 || d.sent < limit || d.stopped.Load() {
		return d.stopped.Load()
	}
	seen := make(chan struct{})
	d.batches <- deliveryBatch{seen: seen}
	<-seen
	return d.stopped.Load()
}

// send hands a batch to fn; false if fn has asked to stop (the batch is
// dropped, its bytes released).
func (d *delivery) send(recs []*LogRecord, held int64) bool {
	if d.stopped.Load() {
		d.tk.Release(held)
		return false
	}
	d.batches <- deliveryBatch{recs: recs, held: held}
	d.sent += len(recs)
	return !d.stopped.Load()
}

// finish waits for fn to have seen every batch sent, and says whether it
// asked to stop, or panicked.
func (d *delivery) finish() (stopped bool, err error) {
	close(d.batches)
	<-d.done
	return d.stopped.Load(), d.panicked
}

// sortCandidates sorts cands newest first, or oldest first.
func sortCandidates(cands []candidate, newest bool) {
	if newest {
		slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(b.time, a.time) })
	} else {
		slices.SortFunc(cands, func(a, b candidate) int { return cmp.Compare(a.time, b.time) })
	}
}

// fileBounds returns bounds [lo, hi] of the times of a file's records of
// the services service accepts (nil: all), from its counts c (the
// minutes they fall in); the widest bounds without counts.
func fileBounds(c *lake.Counts, service func(string) bool) (lo, hi int64) {
	lo, hi = math.MaxInt64, math.MinInt64
	if c == nil {
		return math.MinInt64, math.MaxInt64
	}
	kept := keptServices(c, service)
	for _, e := range c.Entries {
		if !kept(e.Service) {
			continue
		}
		last := e.Minute * lake.CountsMinute
		lo, hi = min(lo, last-lake.CountsMinute+1), max(hi, last)
	}
	if lo > hi { // none selected: noneInRange's callers skip such files
		return math.MinInt64, math.MaxInt64
	}
	return lo, hi
}

// pointRows is the most records of a row group that a query decodes
// through the chunk cache (chunkCache): a few records' pages are mostly
// their dictionaries, which the cache keeps decoded; a batch of many
// reads many pages, which the cache would keep instead.
const pointRows = 64

// pointScanRows is the most rows the body index may leave of a file for
// its filters to scan them through the chunk cache: a few blocks read a
// page or two a column, and decoding the columns' dictionaries again is
// most of that (a rare token's scan). Wider scans read pages without it
// (they read many pages a column, a dictionary is a small part of them,
// and the last pages their readers would keep are the largest).
const pointScanRows = 4 * lake.GramsBlockRows

// logCandidates calls add with the row group, row and time of each record
// of file pf that q's column filters keep, reading each row group through
// wrap if it is not nil (the chunk cache).
func logCandidates(cf *cachedFile, q *LogQuery, wrap func(parquet.RowGroup) parquet.RowGroup, add func(rg int, row, t int64)) error {
	pf := cf.pf
	leaves, err := leavesOf(pf, logCols)
	if err != nil {
		return err
	}
	var keys []keyLeaf
	if len(q.AttrValues) > 0 {
		if keys, err = cf.keyLeaves(); err != nil {
			return err
		}
	}
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	for i, rg := range pf.RowGroups() {
		if wrap != nil {
			rg = wrap(rg)
		}
		sel, none, err := filterRows(rg, leaves, keys, q)
		if err != nil {
			return err
		}
		if none {
			continue
		}
		// Times: the record's, else its observed time for a record
		// without one; rows ascending, from the pages' data.
		var rows, times, zero []int64
		err = eachInt(rg, leaves[lcTime], sel, func(row int64, t int64) {
			rows, times = append(rows, row), append(times, t)
			if t == 0 {
				zero = append(zero, row)
			}
		})
		if err == nil && len(zero) > 0 {
			j := 0
			err = eachInt(rg, leaves[lcObserved], zero, func(row int64, t int64) {
				for j < len(rows) && rows[j] < row {
					j++
				}
				if j < len(rows) && rows[j] == row {
					times[j] = t
				}
			})
		}
		if err != nil {
			return err
		}
		for j, row := range rows {
			if t := times[j]; t >= lo && t < hi {
				add(i, row, t)
			}
		}
	}
	return nil
}

// filterRows returns the rows of rg that q's filters keep, tested on
// their columns alone: the service (Service), the time range (Start,
// End: rowsInRange), the body (Contains, then Matches) and the
// attributes (AttrValues: in the map, the resource's JSON and keys, the
// file's key columns); sel nil for every row, none set when no row
// passes.
func filterRows(rg parquet.RowGroup, leaves []leaf, keys []keyLeaf, q *LogQuery) (sel []int64, none bool, err error) {
	if q.Service != nil {
		memo := map[string]bool{}
		all := false
		if sel, all, err = rowsOfServices(rg, leaves[lcService], func(s []byte) bool {
			v, ok := memo[string(s)]
			if !ok {
				v = q.Service(string(s))
				memo[string(s)] = v
			}
			return v
		}); err != nil || sel == nil && !all {
			return nil, true, err
		}
		if all || int64(len(sel)) == rg.NumRows() {
			sel = nil // every row: the column scans below take all rows faster than a list of them
		}
	}
	if (len(q.Contains) > 0 || len(q.Matches) > 0 || len(q.AttrValues) > 0) && !q.Start.IsZero() && !q.End.IsZero() {
		if sel, none, err = rowsInRange(rg, leaves[lcTime], sel, q.Start.UnixNano(), q.End.UnixNano()); err != nil || none {
			return nil, true, err
		}
	}
	if q.within != nil {
		if sel, err = rowsWithin(rg, leaves[lcTime], sel, q.within); err != nil || sel == nil {
			return nil, true, err
		}
	}
	for _, c := range q.Contains {
		if sel, err = rowsContaining(rg, leaves[lcBody], sel, c); err != nil || sel == nil {
			return nil, true, err
		}
	}
	for i, re := range q.Matches {
		match := re.Match
		if i < len(q.literals) && len(q.literals[i]) > 0 {
			lits := q.literals[i]
			match = func(b []byte) bool {
				for _, l := range lits {
					if !bytes.Contains(b, l) {
						return false
					}
				}
				return re.Match(b)
			}
		}
		if sel, err = rowsWhereStringFunc(rg, leaves[lcBody], sel, match); err != nil || sel == nil {
			return nil, true, err
		}
	}
	if len(q.AttrValues) > 0 {
		if sel, err = rowsWithValues(rg, leaves, keys, sel, q); err != nil || sel == nil {
			return nil, true, err
		}
	}
	return sel, false, nil
}

// rowsWithValues returns the rows of sel (nil: all) that hold each of
// values as the value of one of their attributes, the record's (in the
// map or a key column of keys) or the resource's; nil if none. One scan
// of each column tests every value: the attribute values are the widest
// column of a logs file.
func rowsWithValues(rg parquet.RowGroup, leaves []leaf, keys []keyLeaf, sel []int64, q *LogQuery) ([]int64, error) {
	values, names := q.AttrValues, q.AttrNames
	if len(names) != len(values) || q.AttrLabel == nil {
		names = nil
	}
	if len(values) > 64 { // one bit a value: the rest in another pass
		rest := *q
		rest.AttrValues = values[64:]
		if names != nil {
			rest.AttrNames = names[64:]
			names = names[:64]
		}
		rows, err := rowsWithValues(rg, leaves, keys, sel, &rest)
		if err != nil || rows == nil {
			return nil, err
		}
		sel, values = rows, values[:64]
	}
	all := uint64(1)<<len(values) - 1
	bits := make(map[string]uint64, len(values))
	for i, v := range values {
		bits[v] |= 1 << i
	}
	rows, masks, err := rowMasks(rg, leaves[lcAttrValue], sel, func(b []byte) uint64 { return bits[string(b)] })
	if err != nil {
		return nil, err
	}
	// A resource's attributes are a JSON object: a value of v's
	// characters (AttrValues' callers send only values JSON writes as
	// they are) is in its text.
	var inRes []int // the values the resources may hold
	for i := range values {
		if names == nil || q.resLabels == nil || q.resLabels[names[i]] {
			inRes = append(inRes, i)
		}
	}
	if len(inRes) > 0 {
		inResource, resMasks, err := rowMasks(rg, leaves[lcResource], sel, func(b []byte) uint64 {
			var m uint64
			for _, i := range inRes {
				if bytes.Contains(b, []byte(values[i])) {
					m |= 1 << i
				}
			}
			return m
		})
		if err != nil {
			return nil, err
		}
		rows, masks = orMasks(rows, masks, inResource, resMasks)
	}
	for _, k := range keys {
		kbits := bits
		if names != nil {
			label := q.AttrLabel(k.key)
			kbits = map[string]uint64{}
			for i, v := range values {
				if names[i] == label {
					kbits[v] |= 1 << i
				}
			}
			if len(kbits) == 0 {
				continue // no value asked under this key's label
			}
		}
		kr, km, err := keyMasks(rg, k, sel, kbits)
		if err != nil {
			return nil, err
		}
		rows, masks = orMasks(rows, masks, kr, km)
	}
	var out []int64
	for i, row := range rows {
		if masks[i] == all {
			out = append(out, row)
		}
	}
	return out, nil
}

// orMasks merges two lists of ascending rows with a mask each into one,
// the masks of a row in both OR'ed.
func orMasks(a []int64, am []uint64, b []int64, bm []uint64) ([]int64, []uint64) {
	if len(b) == 0 {
		return a, am
	}
	if len(a) == 0 {
		return b, bm
	}
	rows := make([]int64, 0, len(a)+len(b))
	masks := make([]uint64, 0, len(a)+len(b))
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			rows, masks = append(rows, a[i]), append(masks, am[i])
			i++
		case i == len(a) || b[j] < a[i]:
			rows, masks = append(rows, b[j]), append(masks, bm[j])
			j++
		default:
			rows, masks = append(rows, a[i]), append(masks, am[i]|bm[j])
			i, j = i+1, j+1
		}
	}
	return rows, masks
}

// keyMasks is rowMasks of key column k: the rows of sel whose value's
// text (lake.AppendValueText's) is among bits' keys, with their bits.
func keyMasks(rg parquet.RowGroup, k keyLeaf, sel []int64, bits map[string]uint64) (rows []int64, masks []uint64, err error) {
	add := func(row int64, m uint64) {
		if m != 0 {
			rows, masks = append(rows, row), append(masks, m)
		}
	}
	switch k.kind {
	case lake.KindString:
		return rowMasks(rg, k.l, sel, func(b []byte) uint64 { return bits[string(b)] })
	case lake.KindInt:
		ints := map[int64]uint64{}
		for v, m := range bits {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil && strconv.FormatInt(n, 10) == v {
				ints[n] |= m
			}
		}
		if len(ints) == 0 {
			return nil, nil, nil
		}
		err = eachInt(rg, k.l, sel, func(row int64, v int64) { add(row, ints[v]) })
		return rows, masks, err
	}
	if k.kind == lake.KindBool {
		t, f := bits["true"], bits["false"]
		if t|f == 0 {
			return nil, nil, nil
		}
		err = eachBool(rg, k.l, sel, func(row int64, v bool) {
			if v {
				add(row, t)
			} else {
				add(row, f)
			}
		})
		return rows, masks, err
	}
	var text []byte
	err = eachDouble(rg, k.l, sel, func(row int64, v float64) {
		text = strconv.AppendFloat(text[:0], v, 'g', -1, 64)
		add(row, bits[string(text)])
	})
	return rows, masks, err
}

// keyLeaf is a key column of a version-3 logs file (lake.KeyColumns)
// with its leaf.
type keyLeaf struct {
	key  string
	kind lake.Kind
	l    leaf
}

// keyLeaves returns the key columns of logs file pf, by name; none for
// a file of version 2.
func keyLeaves(pf *parquet.File) ([]keyLeaf, error) {
	kcs, err := lake.KeyColumns(pf)
	if err != nil {
		return nil, err
	}
	out := make([]keyLeaf, len(kcs))
	for i, kc := range kcs {
		lc, _ := pf.Schema().Lookup(kc.Name) // there: lake.KeyColumns
		out[i] = keyLeaf{kc.Key, kc.Kind, leafOf(lc)}
	}
	return out, nil
}

// logsFile reports whether pf is a logs file this package reads: of
// schema version 2 or 3.
func logsFile(pf *parquet.File) bool {
	v, _ := pf.Lookup(lake.SchemaVersionKey)
	return v == "2" || v == "3"
}

// rowMasks returns the rows of sel (nil: all) some of whose values in
// string column l get a test with bits set, ascending, and for each the
// OR of its values' bits. test is called once per dictionary entry for a
// dictionary page.
func rowMasks(rg parquet.RowGroup, l leaf, sel []int64, test func([]byte) uint64) (rows []int64, masks []uint64, err error) {
	err = scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		mask := stringMask(p, test)
		if mask == nil {
			return nil
		}
		walkPage(p, first, l, sel, func(row int64, _, k int) {
			if k < 0 {
				return
			}
			m := mask(k)
			if m == 0 {
				return
			}
			if n := len(rows); n > 0 && rows[n-1] == row {
				masks[n-1] |= m
				return
			}
			rows, masks = append(rows, row), append(masks, m)
		})
		return nil
	})
	return rows, masks, err
}

// leavesOf returns the leaves of the columns named (dotted paths).
func leavesOf(pf *parquet.File, names []string) ([]leaf, error) {
	out := make([]leaf, len(names))
	for i, c := range names {
		lc, ok := pf.Schema().Lookup(strings.Split(c, ".")...)
		if !ok {
			return nil, fmt.Errorf("no column %s", c)
		}
		out[i] = leafOf(lc)
	}
	return out, nil
}

// rowsInRange narrows sel (nil: all rows of rg) to the rows of the
// pages of timestamp column l that may hold a time in [lo, hi) or a 0 (a
// record timed by its observed time), by the column chunk's bounds and
// its page index alone, so that the costly filters after it (a body
// scan) skip a file's rows outside the query's range: a query over 30
// minutes reads files of whole hours. The callers test each row's time
// afterwards. sel comes back as it is when no page is cut; none: no row
// can be in range.
func rowsInRange(rg parquet.RowGroup, l leaf, sel []int64, lo, hi int64) (_ []int64, none bool, err error) {
	if hi <= lo {
		return nil, true, nil
	}
	out := func(mn, mx int64) bool { return (mx < lo || mn >= hi) && !(mn <= 0 && 0 <= mx) }
	cc := rg.ColumnChunks()[l.index]
	if b, ok := cc.(interface {
		Bounds() (min, max parquet.Value, ok bool)
	}); ok {
		if mn, mx, ok := b.Bounds(); ok && !mn.IsNull() && !mx.IsNull() {
			a, z := mn.Int64(), mx.Int64()
			switch {
			case a >= lo && z < hi:
				return sel, false, nil // every row in range
			case out(a, z):
				return nil, true, nil
			}
		}
	}
	ci, err := cc.ColumnIndex()
	if err != nil {
		return sel, false, nil
	}
	var kept [][2]int64 // the pages kept: their rows [first, end)
	cut := false
	indexed := pageRows(cc, rg.NumRows(), sel, func(p int, first, end int64) {
		if p < ci.NumPages() && !ci.NullPage(p) && out(ci.MinValue(p).Int64(), ci.MaxValue(p).Int64()) {
			cut = true
			return
		}
		kept = append(kept, [2]int64{first, end})
	})
	switch {
	case !indexed || !cut:
		return sel, false, nil // no list of every row: the scans after take sel nil faster
	case len(kept) == 0:
		return nil, true, nil
	}
	var keep []int64
	for _, k := range kept {
		keep = rowsIn(keep, sel, k[0], k[1])
	}
	if len(keep) == 0 {
		return nil, true, nil
	}
	return keep, false, nil
}

// rowsOfServices returns the rows of rg whose service (column l) passes
// keep, ascending (nil: none), or all set if every row does. A page
// whose index bounds are one name, whole, is taken or left on its name
// alone, unread (a logs file's pages each hold one service's records:
// a selector of many services reads no page of the column).
func rowsOfServices(rg parquet.RowGroup, l leaf, keep func([]byte) bool) (rows []int64, all bool, err error) {
	cc := rg.ColumnChunks()[l.index]
	var taken [][2]int64 // whole pages that pass: their rows [first, end)
	left := false        // a whole page that does not pass
	decode, done := rowsToRead(cc, rg.NumRows(), nil, func(p int, ci parquet.ColumnIndex, first, end int64) bool {
		min, max := ci.MinValue(p).ByteArray(), ci.MaxValue(p).ByteArray()
		if !bytes.Equal(min, max) || len(min) >= boundsTruncatedAt {
			return false
		}
		if keep(min) {
			taken = append(taken, [2]int64{first, end})
		} else {
			left = true
		}
		return true
	})
	if done && !left {
		return nil, true, nil
	}
	var rest []int64
	if !done {
		if rest, err = rowsWhereStringFunc(rg, l, decode, keep); err != nil {
			return nil, false, err
		}
	}
	if len(taken) == 0 {
		return rest, false, nil
	}
	// The taken pages' rows and the rest's, in order.
	n := len(rest)
	for _, t := range taken {
		n += int(t[1] - t[0])
	}
	rows = make([]int64, 0, n)
	i := 0
	for _, t := range taken {
		for ; i < len(rest) && rest[i] < t[0]; i++ {
			rows = append(rows, rest[i])
		}
		for r := t[0]; r < t[1]; r++ {
			rows = append(rows, r)
		}
	}
	return append(rows, rest[i:]...), false, nil
}

// rowsWhereStringFunc returns the rows of sel (nil: all) whose value in
// string column l passes keep (tested once per dictionary entry for a
// dictionary page); nil if none.
func rowsWhereStringFunc(rg parquet.RowGroup, l leaf, sel []int64, keep func([]byte) bool) ([]int64, error) {
	var out []int64
	err := scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		out = appendRowsWhere(out, p, first, l, sel, keep)
		return nil
	})
	return out, err
}

// appendRowsWhere appends to out the rows of sel (nil: all) in page p,
// whose first row is first, of string column l whose value passes keep.
func appendRowsWhere(out []int64, p parquet.Page, first int64, l leaf, sel []int64, keep func([]byte) bool) []int64 {
	if sel == nil && l.maxDef == 0 && l.maxRep == 0 {
		if out, ok := dictRowsWhere(out, p, first, keep); ok {
			return out
		}
	}
	pass := stringTest(p, keep)
	if pass == nil {
		return out
	}
	walkPage(p, first, l, sel, func(row int64, _, k int) {
		if k >= 0 && pass(k) && (len(out) == 0 || out[len(out)-1] != row) {
			out = append(out, row)
		}
	})
	return out
}

// rowsContaining is rowsWhereStringFunc with bytes.Contains(value,
// needle) as the test: on a plain page of a flat column it searches the
// page's bytes whole, value boundaries checked at each hit, so values
// without the needle cost the vectorized search alone, not a call each
// (the needle scans of frequent words and topk spent most of their
// time in the call per value).
func rowsContaining(rg parquet.RowGroup, l leaf, sel []int64, needle []byte) ([]int64, error) {
	if len(needle) == 0 || l.maxRep != 0 {
		return rowsWhereStringFunc(rg, l, sel, func(b []byte) bool { return bytes.Contains(b, needle) })
	}
	var out []int64
	find := newFinder(needle)
	err := scanPages(rg.ColumnChunks()[l.index], sel, func(p parquet.Page, first int64) error {
		data := p.Data()
		if p.Dictionary() != nil || data.Kind() != encoding.ByteArray || p.RepetitionLevels() != nil {
			out = appendRowsWhere(out, p, first, l, sel, func(b []byte) bool { return bytes.Contains(b, needle) })
			return nil
		}
		b, offs := data.ByteArray()
		def := p.DefinitionLevels()
		// hits: the indexes of the page's non-null values that hold the
		// needle, ascending.
		var hits []int32
		from := 0 // no hit lies in a value before offs[from]
		for at := 0; at < len(b); {
			i := find.index(b[at:])
			if i < 0 {
				break
			}
			i += at
			// The value i lies in: offs[k-1] <= i < offs[k], searched
			// past the last hit's value, near it first (hits of a
			// frequent needle are a few values apart).
			end := min(from+16, len(offs))
			if end > from && offs[end-1] <= uint32(i) {
				end = len(offs)
			}
			k, _ := slices.BinarySearch(offs[from:end], uint32(i)+1)
			k += from
			from = k
			k--
			if k+1 < len(offs) && i+len(needle) <= int(offs[k+1]) {
				hits = append(hits, int32(k))
				at = int(offs[k+1]) // on to the next value
				continue
			}
			at = i + 1 // the match crosses a boundary: on past its start
		}
		if len(hits) == 0 {
			return nil
		}
		// Rows of the hits: the k-th non-null value's row, counting the
		// definition levels (none: the k-th row); only rows of sel.
		n := int(p.NumValues())
		j := 0
		if sel != nil {
			j, _ = slices.BinarySearch(sel, first)
		}
		k, row := 0, 0
		for _, h := range hits {
			if def == nil {
				row = int(h)
			} else {
				for ; row < n; row++ {
					if def[row] == l.maxDef {
						if k == int(h) {
							break
						}
						k++
					}
				}
				if row == n {
					break
				}
			}
			r := first + int64(row)
			if sel != nil {
				for j < len(sel) && sel[j] < r {
					j++
				}
				if j == len(sel) {
					break
				}
				if sel[j] != r {
					continue
				}
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

// finder finds a needle by its rarest byte (byteRank): the vectorized
// IndexByte skips to the few places that byte is, where bytes.Index
// stops at each occurrence of the needle's first byte, which in log text
// is often common ('d' of "deadline exceeded": a tenth of a topk's time
// went to bytes.Index's first-byte loop).
type finder struct {
	needle []byte
	off    int // the rare byte's offset in needle
}

func newFinder(needle []byte) finder {
	f := finder{needle: needle}
	for i, c := range needle {
		if byteRank(c) < byteRank(needle[f.off]) {
			f.off = i
		}
	}
	return f
}

// index is bytes.Index(b, f.needle).
func (f finder) index(b []byte) int {
	n, c := len(f.needle), f.needle[f.off]
	for at := f.off; at < len(b); {
		j := bytes.IndexByte(b[at:], c)
		if j < 0 {
			return -1
		}
		start := at + j - f.off
		if start+n > len(b) {
			return -1
		}
		if bytes.Equal(b[start:start+n], f.needle) {
			return start
		}
		at += j + 1
	}
	return -1
}

// byteRank is how common byte c is in log text, lower rarer: a rough
// order (space, lowercase vowels and common consonants, digits and
// separators most common; upper case, rare letters and other bytes
// least).
func byteRank(c byte) int {
	const common = " etaoinsrhldcumfpgwybvk0123456789=.:/-_,"
	if i := strings.IndexByte(common, c); i >= 0 {
		return 1 + len(common) - i
	}
	return 0
}

// dictRowsWhere appends to out the rows of page p (whose first row is
// first) of a required, unrepeated column whose value passes keep,
// tested once per run of equal dictionary indexes: the service column of
// a file sorted by service is a few long runs, and testing each row
// through walkPage was most of a rare needle's time once the body index
// left a block of rows to read. ok false, nothing appended: p is not a
// dictionary page of a value a row.
func dictRowsWhere(out []int64, p parquet.Page, first int64, keep func([]byte) bool) (_ []int64, ok bool) {
	d, data := p.Dictionary(), p.Data()
	if d == nil || data.Kind() != encoding.Int32 {
		return out, false
	}
	idx := data.Int32()
	if int64(len(idx)) != p.NumRows() {
		return out, false
	}
	last, pass := int32(-1), false
	for k, i := range idx {
		if i != last {
			if i < 0 || int(i) >= d.Len() {
				return out, false
			}
			last, pass = i, keep(d.Index(i).ByteArray())
		}
		if pass {
			out = append(out, first+int64(k))
		}
	}
	return out, true
}

// decodeLogs decodes rows sel (ascending) of row group rg of a logs
// file whose logCols are leaves and key columns keys: the fields asked
// for (0: all), with Time and Service.
func decodeLogs(rg parquet.RowGroup, leaves []leaf, keys []keyLeaf, sel []int64, fields LogFields) ([]*LogRecord, error) {
	if fields == 0 {
		fields = AllLogFields
	}
	var err error
	out := make([]*LogRecord, len(sel))
	all := make([]LogRecord, len(sel))
	for i := range out {
		out[i] = &all[i]
	}
	// cursor returns a finder of a row's record: values come in row
	// order, so a cursor that only moves forward (one per column read).
	cursor := func() func(row int64) *LogRecord {
		j := 0
		return func(row int64) *LogRecord {
			for j < len(sel) && sel[j] < row {
				j++
			}
			if j < len(sel) && sel[j] == row {
				return out[j]
			}
			return nil
		}
	}
	type strCol struct {
		c    int
		need LogFields
		set  func(*LogRecord, []byte)
	}
	resources := map[string][]KV{} // shared by the records of a resource: read only
	strs := []strCol{
		{lcService, 0, func(r *LogRecord, b []byte) { r.Service = string(b) }},
		{lcBody, FieldLine, func(r *LogRecord, b []byte) { r.Line = slices.Clone(b) }},
		{lcSeverityText, FieldSeverity, func(r *LogRecord, b []byte) { r.SeverityText = string(b) }},
		{lcTraceID, FieldIDs, func(r *LogRecord, b []byte) { r.TraceID = string(b) }},
		{lcSpanID, FieldIDs, func(r *LogRecord, b []byte) { r.SpanID = string(b) }},
		{lcScopeName, FieldScope, func(r *LogRecord, b []byte) { r.ScopeName = string(b) }},
		{lcScopeVersion, FieldScope, func(r *LogRecord, b []byte) { r.ScopeVersion = string(b) }},
		{lcResource, FieldResource, func(r *LogRecord, b []byte) {
			// Dictionary encoded: one object per resource, parsed once.
			kvs, ok := resources[string(b)]
			if !ok {
				kvs = jsonKVs(b)
				resources[string(b)] = kvs
			}
			r.Resource = kvs
		}},
	}
	// The columns are read in parallel (inParallel), each task setting
	// fields of its own in the records: times (the observed time after
	// the time, which it stands in for), severity number, each string
	// column, and the attribute map (keys, then values).
	tasks := []func() error{
		func() error {
			at := cursor()
			if err := eachInt(rg, leaves[lcTime], sel, func(row int64, v int64) {
				if rec := at(row); rec != nil {
					rec.Time = v
				}
			}); err != nil {
				return err
			}
			at = cursor()
			return eachInt(rg, leaves[lcObserved], sel, func(row int64, v int64) {
				if rec := at(row); rec != nil && rec.Time == 0 {
					rec.Time = v
				}
			})
		},
	}
	if fields&FieldSeverity != 0 {
		tasks = append(tasks, func() error {
			at := cursor()
			return eachInt(rg, leaves[lcSeverityNumber], sel, func(row int64, v int64) {
				if rec := at(row); rec != nil {
					rec.SeverityNumber = int32(v)
				}
			})
		})
	}
	for _, c := range strs {
		if c.need != 0 && fields&c.need == 0 {
			continue
		}
		tasks = append(tasks, func() error {
			at := cursor()
			return eachString(rg, leaves[c.c], sel, func(row int64, b []byte) {
				if rec := at(row); rec != nil {
					c.set(rec, b)
				}
			})
		})
	}
	// The key columns' values, each column's read by a task of its own
	// (vals[j][i] of record i, set[j][i] if it has one), are added to
	// the map's once all are read, in the columns' order.
	if fields&FieldAttrs == 0 {
		keys = nil
	}
	var vals [][]string
	var set [][]bool
	if fields&FieldAttrs != 0 {
		tasks = append(tasks, func() error { return decodeAttrs(rg, leaves, sel, cursor()) })
		vals, set = make([][]string, len(keys)), make([][]bool, len(keys))
		for j, k := range keys {
			tasks = append(tasks, func() error {
				vals[j], set[j] = make([]string, len(sel)), make([]bool, len(sel))
				i := 0
				put := func(row int64, v string) {
					for i < len(sel) && sel[i] < row {
						i++
					}
					if i < len(sel) && sel[i] == row {
						vals[j][i], set[j][i] = v, true
					}
				}
				// From the pages' data, as lake.AppendValueText writes
				// values.
				switch k.kind {
				case lake.KindString:
					return eachString(rg, k.l, sel, func(row int64, b []byte) { put(row, string(b)) })
				case lake.KindInt:
					return eachInt(rg, k.l, sel, func(row int64, v int64) { put(row, strconv.FormatInt(v, 10)) })
				case lake.KindDouble:
					return eachDouble(rg, k.l, sel, func(row int64, v float64) { put(row, strconv.FormatFloat(v, 'g', -1, 64)) })
				}
				return eachBool(rg, k.l, sel, func(row int64, v bool) { put(row, strconv.FormatBool(v)) })
			})
		}
	}
	if err = inParallel(len(tasks), func(i int) error { return tasks[i]() }); err != nil {
		return nil, err
	}
	for j, k := range keys {
		for i, rec := range out {
			if set[j][i] {
				rec.Attrs = append(rec.Attrs, KV{Key: k.key, Value: vals[j][i]})
			}
		}
	}
	return out, nil
}

// decodeAttrs sets the attributes of the records at finds, of rows sel:
// keys, then values at the same places (a slot is its row and its place
// in the row; an empty map is one null), from the pages' encoded data:
// a row's values only, not the whole page's as parquet.Values.
func decodeAttrs(rg parquet.RowGroup, leaves []leaf, sel []int64, at func(int64) *LogRecord) error {
	type place struct {
		row int64
		at  int
	}
	keyAt := map[place]string{}
	err := eachSlot(rg, leaves[lcAttrKey], sel, func(row int64, i int, b []byte, null bool) {
		if !null {
			keyAt[place{row, i}] = string(b)
		}
	})
	if err != nil {
		return err
	}
	return eachSlot(rg, leaves[lcAttrValue], sel, func(row int64, i int, b []byte, null bool) {
		k, ok := keyAt[place{row, i}]
		if !ok {
			return
		}
		kv := KV{Key: k}
		if !null {
			kv.Value = string(b)
		}
		if rec := at(row); rec != nil {
			rec.Attrs = append(rec.Attrs, kv)
		}
	})
}

// jsonKVs reads a JSON object of attributes as text pairs, in order:
// strings as they are, other values as their JSON. An object as the lake
// writes most (flat, strings without escapes) is read by a scan
// (flatJSONKVs), anything else by encoding/json, ~20x slower: a query
// that decodes a few records of many files parses a resource a file.
func jsonKVs(obj []byte) []KV {
	if kvs, ok := flatJSONKVs(obj); ok {
		return kvs
	}
	return decodedJSONKVs(obj)
}

// decodedJSONKVs is jsonKVs by encoding/json.
func decodedJSONKVs(obj []byte) []KV {
	d := json.NewDecoder(bytes.NewReader(obj))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []KV
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return out
		}
		var raw json.RawMessage
		if err := d.Decode(&raw); err != nil {
			return out
		}
		kv := KV{Key: fmt.Sprint(t)}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			kv.Value = s
		} else {
			kv.Value = string(raw)
		}
		out = append(out, kv)
	}
	return out
}

// flatJSONKVs is jsonKVs for an object whose keys and string values hold
// no escapes, control characters or invalid UTF-8, and whose other values
// are numbers, true or false; ok is false for any other text (then
// jsonKVs decodes it with encoding/json, whose answer FuzzJSONKVs holds
// this one to).
func flatJSONKVs(obj []byte) (out []KV, ok bool) {
	ok = eachFlatJSON(obj, func(key, val string, _ bool) { out = append(out, KV{Key: key, Value: val}) })
	if !ok {
		return nil, false
	}
	return out, true
}

// eachFlatJSON calls fn with each pair of a flat object (as flatJSONKVs
// reads them), str saying the value was a string, and reports whether obj
// was one; fn may have been called for pairs before a false.
func eachFlatJSON(obj []byte, fn func(key, val string, str bool)) bool {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return false
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return true
	}
	for {
		key, next, ok := plainString(obj, i)
		if !ok {
			return false
		}
		i = skipSpace(obj, next)
		if i >= len(obj) || obj[i] != ':' {
			return false
		}
		i = skipSpace(obj, i+1)
		var val string
		str := false
		switch {
		case i >= len(obj):
			return false
		case obj[i] == '"':
			val, i, ok = plainString(obj, i)
			str = true
		default:
			end := i
			for end < len(obj) && obj[end] != ',' && obj[end] != '}' && !isSpace(obj[end]) {
				end++
			}
			lit := obj[i:end]
			if ok = string(lit) == "true" || string(lit) == "false" || isNumber(lit); ok {
				val, i = string(lit), end
			}
		}
		if !ok {
			return false
		}
		fn(key, val, str)
		i = skipSpace(obj, i)
		if i >= len(obj) {
			return false
		}
		switch obj[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(obj, i+1)
		default:
			return false
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// plainString reads the JSON string at b[i] if it holds no escape,
// control character or invalid UTF-8: its text and the index after it.
func plainString(b []byte, i int) (string, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return "", i, false
	}
	end := bytes.IndexByte(b[i+1:], '"')
	if end < 0 {
		return "", i, false
	}
	s := b[i+1 : i+1+end]
	ascii := true
	for _, c := range s {
		if c < 0x20 || c == '\\' {
			return "", i, false
		}
		ascii = ascii && c < utf8.RuneSelf
	}
	if !ascii && !utf8.Valid(s) {
		return "", i, false
	}
	return string(s), i + end + 2, true
}

// isNumber reports whether b is a JSON number.
func isNumber(b []byte) bool {
	i := 0
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i, n = i+1, n+1
		}
		return n
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case digits() == 0:
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(b)
}

// freshLogs calls add with each log record of an OTLP logs request that
// q's filters keep.
func freshLogs(payload []byte, q *LogQuery, add func(*LogRecord)) error {
	lo, hi := q.Start.UnixNano(), q.End.UnixNano()
	var buf []byte
	text := func(v otlpwire.Value) string {
		buf, _ = lake.AppendValueText(buf[:0], v)
		return string(buf)
	}
	var (
		svc      string
		resource []KV // the current resource's attributes, shared by its records
		sf       otlpwire.ScopeFields
		f        otlpwire.LogRecordFields
	)
	return otlpwire.LogsRequest(payload).Walk(otlpwire.LogVisitor{
		ResourceLogs: func(rl otlpwire.ResourceLogs) error {
			res, err := rl.Resource()
			if err != nil {
				return err
			}
			var rf otlpwire.ResourceFields
			if err := res.Read(&rf); err != nil {
				return err
			}
			svc, resource = "unknown_service", nil
			for kv, err := range rf.Attributes.All() {
				if err != nil {
					return err
				}
				if string(kv.Key) == "service.name" && kv.Value.Type() == otlpwire.ValueString && len(kv.Value.Str()) > 0 && svc == "unknown_service" {
					svc = string(kv.Value.Str())
				}
				resource = append(resource, KV{string(kv.Key), text(kv.Value)})
			}
			if q.Service != nil && !q.Service(svc) {
				return otlpwire.Skip
			}
			return nil
		},
		ScopeLogs: func(sl otlpwire.ScopeLogs) error {
			sc, err := sl.Scope()
			if err != nil {
				return err
			}
			return sc.Read(&sf)
		},
		LogRecord: func(lr otlpwire.LogRecord) error {
			if err := lr.Read(&f); err != nil {
				return err
			}
			t := int64(f.Time)
			if t == 0 {
				t = int64(f.ObservedTime)
			}
			if t < lo || t >= hi {
				return nil
			}
			line, err := lake.AppendValueText(nil, f.Body)
			if err != nil {
				return err
			}
			for _, c := range q.Contains {
				if !bytes.Contains(line, c) {
					return nil
				}
			}
			for _, re := range q.Matches {
				if !re.Match(line) {
					return nil
				}
			}
			rec := &LogRecord{Time: t, Line: line, Service: svc, Resource: resource,
				ScopeName: string(sf.Name), ScopeVersion: string(sf.Version),
				SeverityText: string(f.SeverityText), SeverityNumber: f.SeverityNumber}
			if len(f.TraceID) == 16 {
				rec.TraceID = hex.EncodeToString(f.TraceID)
			}
			if len(f.SpanID) == 8 {
				rec.SpanID = hex.EncodeToString(f.SpanID)
			}
			for kv, err := range f.Attributes.All() {
				if err != nil {
					return err
				}
				rec.Attrs = append(rec.Attrs, KV{string(kv.Key), text(kv.Value)})
			}
			add(rec)
			return nil
		},
	})
}

// LogStream is a service and resource that log records came from.
type LogStream struct {
	Service  string
	Resource []KV
}

// LogStreams returns the distinct services and resources of tenant's log
// records in the hours that overlap [start, end), and of those not in
// files yet: what Loki's label and series endpoints list. Each file's are
// read once (two dictionary-encoded columns) and kept.
func (r *Reader) LogStreams(ctx context.Context, tenant string, start, end time.Time) ([]LogStream, error) {
	fq := r.newQuery(tenant, start, end)
	fq.signal = otlpwire.SignalLogs
	seen := map[string]LogStream{}
	addStream := func(svc string, res []byte, kvs []KV) {
		k := svc + "\x00" + string(res)
		if _, ok := seen[k]; !ok {
			if kvs == nil {
				kvs = jsonKVs(res)
			}
			seen[k] = LogStream{Service: svc, Resource: kvs}
		}
	}
	all := LogQuery{Start: start, End: end}
	err := fq.fresh(ctx, func(p []byte) error {
		return freshLogs(p, &all, func(rec *LogRecord) {
			var b strings.Builder
			for _, kv := range rec.Resource {
				b.WriteString(kv.Key + "\x00" + kv.Value + "\x00")
			}
			addStream(rec.Service, []byte(b.String()), rec.Resource)
		})
	})
	if err != nil {
		return nil, err
	}
	files, err := fq.list(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		pairs, ok := r.streams.get(keyOf(f))
		if !ok {
			err := fq.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
				if !logsFile(pf) {
					return nil
				}
				leaves, err := leavesOf(pf, []string{"service_name", "resource_attributes"})
				if err != nil {
					return err
				}
				distinct := map[[2]string]bool{}
				for _, rg := range pf.RowGroups() {
					svcs := map[int64]string{}
					if err := eachValue(rg.ColumnChunks()[leaves[0].index], nil, func(row int64, v parquet.Value) { svcs[row] = string(v.ByteArray()) }); err != nil {
						return err
					}
					if err := eachValue(rg.ColumnChunks()[leaves[1].index], nil, func(row int64, v parquet.Value) {
						distinct[[2]string{svcs[row], string(v.ByteArray())}] = true
					}); err != nil {
						return err
					}
				}
				for p := range distinct {
					pairs = append(pairs, p)
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
			r.streams.put(keyOf(f), pairs)
		}
		for _, p := range pairs {
			addStream(p[0], []byte(p[1]), nil)
		}
	}
	out := make([]LogStream, 0, len(seen))
	for _, s := range seen {
		out = append(out, s)
	}
	return out, nil
}

// streamCache keeps each logs file's distinct (service, resource JSON).
type streamCache = fileMemo[[][2]string]
