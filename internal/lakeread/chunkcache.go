package lakeread

import (
	"container/list"
	"fmt"
	"sync"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/bloom"
)

// chunkCache keeps the page readers of open files' column chunks between
// queries (parquet-go's FilePages, each with its chunk's decoded
// dictionary and the last page it read), so that a query does not decode
// a dictionary page again for every column it touches: in a trace by id,
// decoding the dictionaries was half of reading the span's columns (a
// profile of serve: 0.74 of 1.48 s). A reader serves one scan at a time:
// a scan takes it out of the cache and puts it back when done. The
// cache holds at most max bytes (dictionaries, last pages and read
// buffers), the least recently used closed past it, and a file's readers
// are closed when the file cache closes the file.
//
// A reader is put back only while its file is held by a query (the file
// cache's rule), and a file's readers are dropped only when no query
// holds it: so a dropped file's reader is never put back.
//
// It keeps column chunks' bloom filters too, read whole into memory
// (bloom): parquet-go's file filter reads the 32-byte block a check
// needs from the file, a system call each, and a trace by id checks
// every row group of every file of its range (17 % of a lookup in a
// profile of serve, most of it in pread).
type chunkCache struct {
	max     int64
	bufSize int64 // bytes of a reader's read buffer

	mu     sync.Mutex
	used   int64
	lru    list.List                                  // of *chunkReader or *chunkBloom, most recent first
	idle   map[*parquet.FileColumnChunk]*list.Element // at most one idle reader a chunk
	blooms map[*parquet.FileColumnChunk]*list.Element
	byFile map[*parquet.File]map[*list.Element]bool
}

type chunkBloom struct {
	cc     *parquet.FileColumnChunk
	filter bloom.SplitBlockFilter
}

type chunkReader struct {
	cc    *parquet.FileColumnChunk
	pages *parquet.FilePages
	size  int64
}

func newChunkCache(max, bufSize int64) *chunkCache {
	return &chunkCache{max: max, bufSize: bufSize, idle: map[*parquet.FileColumnChunk]*list.Element{},
		blooms: map[*parquet.FileColumnChunk]*list.Element{}, byFile: map[*parquet.File]map[*list.Element]bool{}}
}

// mayHoldBytes reports whether the bloom filter of column chunk cc (of
// byte arrays) may hold v: true if cc has no filter. The filter is read
// whole once and kept (within the bound, shared by every query: it is
// never written); without the cache, or for a filter it cannot keep,
// parquet-go's file filter answers.
func (c *chunkCache) mayHoldBytes(cc parquet.ColumnChunk, v []byte) (bool, error) {
	return c.mayHoldHashed(cc, v, bloom.XXH64{}.Sum64(v))
}

// mayHoldHashed is mayHoldBytes of v whose filter hash (bloom.XXH64) is h,
// for a caller that checks v against many filters.
func (c *chunkCache) mayHoldHashed(cc parquet.ColumnChunk, v []byte, h uint64) (bool, error) {
	fc, ok := cc.(*parquet.FileColumnChunk)
	if c == nil || !ok {
		if bf := cc.BloomFilter(); bf != nil {
			return bf.Check(parquet.ByteArrayValue(v))
		}
		return true, nil
	}
	c.mu.Lock()
	if e, ok := c.blooms[fc]; ok {
		c.lru.MoveToFront(e)
		f := e.Value.(*chunkBloom).filter
		c.mu.Unlock()
		return f.Check(h), nil
	}
	c.mu.Unlock()
	bf := cc.BloomFilter() // parquet-go works out where it is on each call
	if bf == nil {
		return true, nil
	}
	size := bf.Size()
	if size <= 0 || size%bloom.BlockSize != 0 || size > c.max/4 {
		return bf.Check(parquet.ByteArrayValue(v))
	}
	data := make([]byte, size)
	if _, err := bf.ReadAt(data, 0); err != nil {
		return false, fmt.Errorf("read bloom filter: %w", err)
	}
	f := bloom.MakeSplitBlockFilter(data)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.blooms[fc]; !dup {
		e := c.lru.PushFront(&chunkBloom{cc: fc, filter: f})
		c.blooms[fc] = e
		c.addLocked(fc.File(), e, size)
	}
	return f.Check(h), nil
}

// addLocked counts e, of size bytes and file pf, in the cache, and
// closes the least recently used entries past the bound.
func (c *chunkCache) addLocked(pf *parquet.File, e *list.Element, size int64) {
	if c.byFile[pf] == nil {
		c.byFile[pf] = map[*list.Element]bool{}
	}
	c.byFile[pf][e] = true
	c.used += size
	for c.used > c.max {
		if r := c.removeLocked(c.lru.Back()); r != nil {
			r.pages.Close()
		}
	}
}

// rowGroup returns rg, its column chunks' Pages from the cache, which
// keeps every chunk's reader (a spans file's pages hold 512 rows: a
// reader's last page is small, and a lookup of the same trace again
// reads none).
func (c *chunkCache) rowGroup(rg parquet.RowGroup) parquet.RowGroup { return c.wrap(rg, true) }

// dictionaryRowGroup is rowGroup keeping the readers of chunks with a
// dictionary alone: a reader of one without saves nothing but a seek,
// and would hold its last page (up to a page's size, 64 KiB for a logs
// body), crowding out the readers that save a dictionary's decoding.
func (c *chunkCache) dictionaryRowGroup(rg parquet.RowGroup) parquet.RowGroup {
	return c.wrap(rg, false)
}

func (c *chunkCache) wrap(rg parquet.RowGroup, plain bool) parquet.RowGroup {
	if c == nil {
		return rg
	}
	ccs := rg.ColumnChunks()
	chunks := make([]parquet.ColumnChunk, len(ccs))
	for j, cc := range ccs {
		chunks[j] = cc
		if fc, ok := cc.(*parquet.FileColumnChunk); ok {
			chunks[j] = cachingChunk{fc, c, plain}
		}
	}
	return cachingRowGroup{rg, chunks}
}

type cachingRowGroup struct {
	parquet.RowGroup
	chunks []parquet.ColumnChunk
}

func (g cachingRowGroup) ColumnChunks() []parquet.ColumnChunk { return g.chunks }

// cachingChunk is a column chunk whose page readers come from a
// chunkCache.
type cachingChunk struct {
	*parquet.FileColumnChunk
	c     *chunkCache
	plain bool // keep the reader if the chunk has no dictionary too
}

func (cc cachingChunk) Pages() parquet.Pages { return cc.c.pages(cc.FileColumnChunk, cc.plain) }

// pages returns a page reader of fc for the caller alone: the cached one
// if idle, else a new one. Closing it puts it back. A reused reader is
// where its last scan left it: a scan seeks before it reads.
func (c *chunkCache) pages(fc *parquet.FileColumnChunk, plain bool) parquet.Pages {
	c.mu.Lock()
	if e, ok := c.idle[fc]; ok {
		r := c.removeLocked(e)
		c.mu.Unlock()
		return &cachedPages{FilePages: r.pages, c: c, cc: fc, size: r.size, plain: plain}
	}
	c.mu.Unlock()
	pages := fc.Pages()
	fp, ok := pages.(*parquet.FilePages) // not in async mode (remote): its own reader, read ahead
	if !ok {
		return pages
	}
	return &cachedPages{FilePages: fp, c: c, cc: fc, plain: plain}
}

// put keeps r as cc's idle reader, or closes it if cc has one already or
// it alone is past the bound.
func (c *chunkCache) put(r *chunkReader) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.idle[r.cc]; dup || r.size > c.max/4 {
		r.pages.Close()
		return
	}
	e := c.lru.PushFront(r)
	c.idle[r.cc] = e
	c.addLocked(r.cc.File(), e, r.size)
}

// removeLocked takes e out of the cache and returns its reader, or nil
// for a bloom filter.
func (c *chunkCache) removeLocked(e *list.Element) *chunkReader {
	c.lru.Remove(e)
	var f *parquet.File
	r, _ := e.Value.(*chunkReader)
	if r != nil {
		delete(c.idle, r.cc)
		f = r.cc.File()
		c.used -= r.size
	} else {
		b := e.Value.(*chunkBloom)
		delete(c.blooms, b.cc)
		f = b.cc.File()
		c.used -= int64(len(b.filter)) * bloom.BlockSize
	}
	delete(c.byFile[f], e)
	if len(c.byFile[f]) == 0 {
		delete(c.byFile, f)
	}
	return r
}

// dropFile closes the idle readers of pf's chunks: the file is closing.
func (c *chunkCache) dropFile(pf *parquet.File) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for e := range c.byFile[pf] {
		if r := c.removeLocked(e); r != nil {
			r.pages.Close()
		}
	}
}

// cachedPages is a page reader of the cache: Close puts it back.
type cachedPages struct {
	*parquet.FilePages
	c     *chunkCache
	cc    *parquet.FileColumnChunk
	size  int64 // what the reader held when taken from the cache; 0 if new
	last  int64 // bytes of the last page read, which the reader keeps
	read  bool
	plain bool // kept if its chunk has no dictionary too
}

func (p *cachedPages) ReadPage() (parquet.Page, error) {
	page, err := p.FilePages.ReadPage()
	if err == nil {
		// The reader keeps the page it decoded last; a page read whole
		// (scans seek to a page's first row) tells its size.
		p.last, p.read = page.Size(), true
	}
	return page, err
}

func (p *cachedPages) Close() error {
	if p.FilePages == nil {
		return nil
	}
	fp := p.FilePages
	p.FilePages = nil
	if !p.read {
		if p.size == 0 {
			return fp.Close()
		}
		p.c.put(&chunkReader{cc: p.cc, pages: fp, size: p.size})
		return nil
	}
	d, err := fp.ReadDictionary()
	if err != nil || d == nil && !p.plain {
		return fp.Close()
	}
	size := p.c.bufSize + p.last
	if d != nil {
		size += d.Size()
	}
	p.c.put(&chunkReader{cc: p.cc, pages: fp, size: size})
	return nil
}
