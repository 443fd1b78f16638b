package lakeread

import (
	"bytes"
	"container/list"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
)

// fileCache keeps the lake's files open with their footers parsed (and
// the indexes and bloom filters parquet-go loads on use), so that a query
// does not decode every footer again: for trace by id, decoding footers
// was most of the time. Entries are keyed by name, size and upload time
// (a replaced object is a new entry), the least recently used closed past
// the bounds (a number of copies, and the memory their footers take), and
// those of objects a listing no longer shows dropped.
//
// An open file serves one query at a time: a query that finds every open
// copy of a file in use opens another (kept too, within the bound). So
// the bytes read through a copy while a query holds it are that query's
// alone, and its byte budget is never charged with another's reads.
type fileCache struct {
	max      int
	maxBytes int64               // bounds the copies' cost (footerCost); 0: no bound
	onClose  func(*parquet.File) // if set, called with a copy's file before it is closed

	mu      sync.Mutex
	entries map[fileKey][]*list.Element // idle copies of the key, of *cachedFile
	lru     list.List                   // every cached copy, most recent first
	used    int64                       // the cached copies' cost
}

// footerCost is what an open copy holds in memory for the footer bytes
// it read when opened: parquet-go's decoded metadata (row groups, column
// chunks and their statistics) takes about five times the encoded footer
// (measured on the lake's spans files: 104 KB footers, ~550 KB decoded).
func footerCost(read int64) int64 { return 6*read + 4<<10 }

type fileKey struct {
	name string
	size int64
	mod  time.Time
}

// cachedFile is an open copy of a file. Reads through it are counted in
// read, which the query holding it charges to its budget.
type cachedFile struct {
	key  fileKey
	obj  bucket.Object
	pf   *parquet.File
	read atomic.Int64
	cost int64 // footerCost of the bytes read opening it

	// counts are the file's lake.Counts, parsed on first use (countsRead)
	// by the query holding the copy; nil if it has none or they are
	// malformed or do not hold the file's rows.
	counts     *lake.Counts
	countsRead bool
	// grams are the file's lake.Grams, likewise.
	grams     *lake.Grams
	gramsRead bool
	// resKeys are the keys of the file's resources (a logs file's
	// resource_attributes), read on first use from the column's
	// dictionaries; resKeysOK says they are every key there (false: a
	// chunk is not dictionary-coded through and through, or unreadable).
	// keys are the key columns of a logs file of version 3 (keyLeaves),
	// found on first use; keysErr why they could not be.
	keys        []keyLeaf
	keysErr     error
	keysRead    bool
	resKeys     map[string]bool
	resKeysOK   bool
	resKeysRead bool

	elem    *list.Element // in fileCache.lru; nil when not cached
	busy    bool          // held by a query; guarded by fileCache.mu
	dropped bool          // out of the cache: closed when released
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n *atomic.Int64
}

func (c countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

func newFileCache(max int, maxBytes int64) *fileCache {
	return &fileCache{max: max, maxBytes: maxBytes, entries: map[fileKey][]*list.Element{}}
}

// get returns an idle open copy of key, or one opened with open (whose
// reads it must count in read), and holds it for the caller alone until
// release; hit tells whether it was open already. A cache of size 0
// opens every time.
func (c *fileCache) get(key fileKey, open func(read *atomic.Int64) (bucket.Object, *parquet.File, error)) (cf *cachedFile, hit bool, err error) {
	c.mu.Lock()
	if idle := c.entries[key]; len(idle) > 0 {
		e := idle[len(idle)-1]
		c.setIdle(key, idle[:len(idle)-1])
		cf := e.Value.(*cachedFile)
		cf.busy = true
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return cf, true, nil
	}
	c.mu.Unlock()
	cf = &cachedFile{key: key, busy: true}
	if cf.obj, cf.pf, err = open(&cf.read); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.max <= 0 {
		cf.dropped = true
		return cf, false, nil
	}
	cf.cost = footerCost(cf.read.Load())
	cf.elem = c.lru.PushFront(cf)
	c.used += cf.cost
	for c.lru.Len() > c.max || c.maxBytes > 0 && c.used > c.maxBytes && c.lru.Len() > 1 {
		c.dropLocked(c.lru.Back())
	}
	return cf, false, nil
}

func (c *fileCache) setIdle(key fileKey, idle []*list.Element) {
	if len(idle) == 0 {
		delete(c.entries, key)
		return
	}
	c.entries[key] = idle
}

// release ends a query's use of cf: it is idle again, or closed if it
// left the cache meanwhile.
func (c *fileCache) release(cf *cachedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf.busy = false
	if cf.dropped {
		c.closeLocked(cf)
		return
	}
	c.entries[cf.key] = append(c.entries[cf.key], cf.elem)
}

// dropLocked takes copy e out of the cache, closing it unless a query
// holds it (release closes it then).
func (c *fileCache) dropLocked(e *list.Element) {
	cf := e.Value.(*cachedFile)
	c.lru.Remove(e)
	c.used -= cf.cost
	cf.dropped = true
	if !cf.busy {
		idle := c.entries[cf.key]
		for i, x := range idle {
			if x == e {
				idle = append(idle[:i], idle[i+1:]...)
				break
			}
		}
		c.setIdle(cf.key, idle)
		c.closeLocked(cf)
	}
}

// closeLocked closes copy cf, which no query holds.
func (c *fileCache) closeLocked(cf *cachedFile) {
	if c.onClose != nil {
		c.onClose(cf.pf)
	}
	cf.obj.Close()
}

// keepOnly drops the entries of names under prefix not in listed.
func (c *fileCache) keepOnly(prefix string, listed map[fileKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; {
		next := e.Next()
		k := e.Value.(*cachedFile).key
		if len(k.name) >= len(prefix) && k.name[:len(prefix)] == prefix && !listed[k] {
			c.dropLocked(e)
		}
		e = next
	}
}

// close drops every entry.
func (c *fileCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := c.lru.Front(); e != nil; e = c.lru.Front() {
		c.dropLocked(e)
	}
}

// logCounts returns the counts of the file, parsed once per open copy;
// nil if it has none a reader can trust (lake.TrustedMeta): then its
// columns are read.
func (cf *cachedFile) logCounts() *lake.Counts {
	if !cf.countsRead {
		cf.countsRead = true
		if c, ok := lake.TrustedMeta(cf.pf, lake.CountsKey, lake.ParseCounts, lake.Counts.Rows); ok {
			cf.counts = &c
		}
	}
	return cf.counts
}

// resourceKeys returns the keys of the resources of a logs file's
// records, read once per open copy from its resource_attributes column's
// dictionary pages (a resource's attributes are a JSON object); ok is
// false unless each row group's chunk of that column is dictionary-coded
// in every data page (its encoding stats say so), so that the
// dictionaries hold every resource. The map is shared: not to be
// changed.
func (cf *cachedFile) resourceKeys() (keys map[string]bool, ok bool) {
	if !cf.resKeysRead {
		cf.resKeysRead = true
		cf.resKeys, cf.resKeysOK = dictionaryJSONKeys(cf.pf, "resource_attributes")
	}
	return cf.resKeys, cf.resKeysOK
}

// keyLeaves returns the key columns of a logs file (keyLeaves), found
// once per open copy. The slice is shared: not to be changed.
func (cf *cachedFile) keyLeaves() ([]keyLeaf, error) {
	if !cf.keysRead {
		cf.keysRead = true
		cf.keys, cf.keysErr = keyLeaves(cf.pf)
	}
	return cf.keys, cf.keysErr
}

// logGrams returns the body index of the file, likewise (its grams
// region read whole, or its footer's value: lake.FileGrams); nil: its
// bodies are read.
func (cf *cachedFile) logGrams() *lake.Grams {
	if !cf.gramsRead {
		cf.gramsRead = true
		if g, ok := lake.FileGrams(cf.pf, countingReader{cf.obj, &cf.read}, cf.obj.Size()); ok {
			cf.grams = &g
		}
	}
	return cf.grams
}

// dictionaryJSONKeys returns the keys of the JSON objects in column
// name of pf (a top-level column of strings), read from its chunks'
// dictionaries; ok is false if a chunk has a data page that is not
// dictionary-coded, or no encoding stats to tell, or a dictionary
// cannot be read.
func dictionaryJSONKeys(pf *parquet.File, name string) (keys map[string]bool, ok bool) {
	lc, found := pf.Schema().Lookup(name)
	if !found {
		return nil, false
	}
	md := pf.Metadata()
	keys = map[string]bool{}
	for i, rg := range pf.RowGroups() {
		if i >= len(md.RowGroups) || lc.ColumnIndex >= len(md.RowGroups[i].Columns) {
			return nil, false
		}
		if !allDictionary(md.RowGroups[i].Columns[lc.ColumnIndex].MetaData.EncodingStats) {
			return nil, false
		}
		if rg.NumRows() == 0 {
			continue
		}
		pages := rg.ColumnChunks()[lc.ColumnIndex].Pages()
		d, err := readDictionary(pages)
		pages.Close()
		if err != nil {
			return nil, false
		}
		if d == nil {
			continue // every value null: no dictionary
		}
		for j := range d.Len() {
			if !objectKeys(d.Index(int32(j)).ByteArray(), keys) {
				return nil, false
			}
		}
	}
	return keys, true
}

// readDictionary returns the dictionary of a column chunk's pages: nil
// if it has none.
func readDictionary(pages parquet.Pages) (parquet.Dictionary, error) {
	fp, ok := pages.(interface {
		ReadDictionary() (parquet.Dictionary, error)
	})
	if !ok {
		return nil, fmt.Errorf("read dictionary: pages of type %T", pages)
	}
	return fp.ReadDictionary()
}

// objectKeys adds the keys of the JSON object obj to keys; false if obj
// is not one.
func objectKeys(obj []byte, keys map[string]bool) bool {
	d := json.NewDecoder(bytes.NewReader(obj))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return false
		}
		k, isKey := t.(string)
		if !isKey {
			return false
		}
		keys[k] = true
		var skip json.RawMessage
		if err := d.Decode(&skip); err != nil {
			return false
		}
	}
	return true
}

// held is what the cached copies cost now (footerCost).
func (c *fileCache) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
