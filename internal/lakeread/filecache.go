package lakeread

import (
	"container/list"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// fileCache keeps the lake's files open with their footers parsed (and
// the indexes and bloom filters parquet-go loads on use), so that a query
// does not decode every footer again: for trace by id, decoding footers
// was most of the time. Entries are keyed by name, size and upload time
// (a replaced object is a new entry), the least recently used closed past
// the bound, and those of objects a listing no longer shows dropped.
type fileCache struct {
	max int

	mu      sync.Mutex
	entries map[fileKey]*list.Element // of *cachedFile
	lru     list.List                 // most recent first
}

type fileKey struct {
	name string
	size int64
	mod  time.Time
}

// cachedFile is an open file. Reads through it are counted in read, which
// queries charge to their budgets (by the difference over their use).
type cachedFile struct {
	key  fileKey
	obj  bucket.Object
	pf   *parquet.File
	read atomic.Int64

	refs    int  // queries using it; guarded by fileCache.mu
	dropped bool // out of the cache: closed when refs reaches 0
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

func newFileCache(max int) *fileCache {
	return &fileCache{max: max, entries: map[fileKey]*list.Element{}}
}

// get returns the open file of key, opening it with open (whose reads it
// must count in read) on a miss, and holds it until release; hit tells
// whether it was open already. A cache of size 0 opens every time.
func (c *fileCache) get(key fileKey, open func(read *atomic.Int64) (bucket.Object, *parquet.File, error)) (cf *cachedFile, hit bool, err error) {
	c.mu.Lock()
	if e, ok := c.entries[key]; ok {
		cf := e.Value.(*cachedFile)
		cf.refs++
		c.lru.MoveToFront(e)
		c.mu.Unlock()
		return cf, true, nil
	}
	c.mu.Unlock()
	cf = &cachedFile{key: key, refs: 1}
	if cf.obj, cf.pf, err = open(&cf.read); err != nil {
		return nil, false, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok || c.max <= 0 {
		cf.dropped = true // another query opened it meanwhile, or no cache
		return cf, false, nil
	}
	c.entries[key] = c.lru.PushFront(cf)
	for c.lru.Len() > c.max {
		c.dropLocked(c.lru.Back())
	}
	return cf, false, nil
}

// release ends a query's use of cf.
func (c *fileCache) release(cf *cachedFile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cf.refs--
	if cf.dropped && cf.refs == 0 {
		cf.obj.Close()
	}
}

func (c *fileCache) dropLocked(e *list.Element) {
	cf := e.Value.(*cachedFile)
	c.lru.Remove(e)
	delete(c.entries, cf.key)
	cf.dropped = true
	if cf.refs == 0 {
		cf.obj.Close()
	}
}

// keepOnly drops the entries of names under prefix not in listed.
func (c *fileCache) keepOnly(prefix string, listed map[fileKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, e := range c.entries {
		if len(k.name) >= len(prefix) && k.name[:len(prefix)] == prefix && !listed[k] {
			c.dropLocked(e)
		}
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
