package lakeread

import (
	"container/list"
	"sync"

	"github.com/parquet-go/parquet-go"
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
type chunkCache struct {
	max     int64
	bufSize int64 // bytes of a reader's read buffer

	mu     sync.Mutex
	used   int64
	lru    list.List                                  // of *chunkReader, most recent first
	idle   map[*parquet.FileColumnChunk]*list.Element // at most one idle reader a chunk
	byFile map[*parquet.File]map[*list.Element]bool
}

type chunkReader struct {
	cc    *parquet.FileColumnChunk
	pages *parquet.FilePages
	size  int64
}

func newChunkCache(max, bufSize int64) *chunkCache {
	return &chunkCache{max: max, bufSize: bufSize,
		idle: map[*parquet.FileColumnChunk]*list.Element{}, byFile: map[*parquet.File]map[*list.Element]bool{}}
}

// rowGroup returns rg, its column chunks' Pages from the cache.
func (c *chunkCache) rowGroup(rg parquet.RowGroup) parquet.RowGroup {
	if c == nil {
		return rg
	}
	ccs := rg.ColumnChunks()
	chunks := make([]parquet.ColumnChunk, len(ccs))
	for j, cc := range ccs {
		chunks[j] = cc
		if fc, ok := cc.(*parquet.FileColumnChunk); ok {
			chunks[j] = cachingChunk{fc, c}
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
	c *chunkCache
}

func (cc cachingChunk) Pages() parquet.Pages { return cc.c.pages(cc.FileColumnChunk) }

// pages returns a page reader of fc for the caller alone: the cached one
// if idle, else a new one. Closing it puts it back. A reused reader is
// where its last scan left it: a scan seeks before it reads.
func (c *chunkCache) pages(fc *parquet.FileColumnChunk) parquet.Pages {
	c.mu.Lock()
	if e, ok := c.idle[fc]; ok {
		r := c.removeLocked(e)
		c.mu.Unlock()
		return &cachedPages{FilePages: r.pages, c: c, cc: fc, size: r.size}
	}
	c.mu.Unlock()
	pages := fc.Pages()
	fp, ok := pages.(*parquet.FilePages) // not in async mode (remote): its own reader, read ahead
	if !ok {
		return pages
	}
	return &cachedPages{FilePages: fp, c: c, cc: fc}
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
	f := r.cc.File()
	if c.byFile[f] == nil {
		c.byFile[f] = map[*list.Element]bool{}
	}
	c.byFile[f][e] = true
	c.used += r.size
	for c.used > c.max {
		c.removeLocked(c.lru.Back()).pages.Close()
	}
}

// removeLocked takes e out of the cache and returns its reader.
func (c *chunkCache) removeLocked(e *list.Element) *chunkReader {
	r := e.Value.(*chunkReader)
	c.lru.Remove(e)
	delete(c.idle, r.cc)
	f := r.cc.File()
	delete(c.byFile[f], e)
	if len(c.byFile[f]) == 0 {
		delete(c.byFile, f)
	}
	c.used -= r.size
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
		c.removeLocked(e).pages.Close()
	}
}

// cachedPages is a page reader of the cache: Close puts it back.
type cachedPages struct {
	*parquet.FilePages
	c    *chunkCache
	cc   *parquet.FileColumnChunk
	size int64 // what the reader held when taken from the cache; 0 if new
	last int64 // bytes of the last page read, which the reader keeps
	read bool
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
	size := p.c.bufSize + p.last
	if d, err := fp.ReadDictionary(); err == nil && d != nil {
		size += d.Size()
	} else if err != nil {
		return fp.Close()
	}
	p.c.put(&chunkReader{cc: p.cc, pages: fp, size: size})
	return nil
}
