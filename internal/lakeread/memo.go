package lakeread

import (
	"strings"
	"sync"
)

// fileMemo keeps a value worked out once from each lake file (its distinct
// span names, its log streams): files do not change, so each is read once
// and later queries walk the small values instead. Entries of files a
// listing no longer shows are dropped by keepOnly. It is safe for
// concurrent use; the values it hands out are shared and must not be
// changed.
type fileMemo[V any] struct {
	mu sync.Mutex
	m  map[fileKey]V
}

// get returns the value kept for k, and whether there is one.
func (c *fileMemo[V]) get(k fileKey) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

// put keeps v for k.
func (c *fileMemo[V]) put(k fileKey, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[fileKey]V{}
	}
	c.m[k] = v
}

// keepOnly drops the entries of files under prefix that are not in
// listed.
func (c *fileMemo[V]) keepOnly(prefix string, listed map[fileKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if strings.HasPrefix(k.name, prefix) && !listed[k] {
			delete(c.m, k)
		}
	}
}

// boundedMemo is fileMemo within a bound: a value is admitted while the
// values kept cost at most max bytes (size's), and kept until a listing
// no longer shows its file; a query over more files than fit evicts
// none of those kept. Safe for concurrent use; values are shared and
// must not be changed.
type boundedMemo[V any] struct {
	max  int64
	size func(V) int64

	mu   sync.Mutex
	used int64
	m    map[fileKey]V
}

func (c *boundedMemo[V]) get(k fileKey) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *boundedMemo[V]) put(k fileKey, v V) {
	n := c.size(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.m[k]; ok || c.used+n > c.max {
		return
	}
	if c.m == nil {
		c.m = map[fileKey]V{}
	}
	c.m[k] = v
	c.used += n
}

func (c *boundedMemo[V]) keepOnly(prefix string, listed map[fileKey]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, v := range c.m {
		if strings.HasPrefix(k.name, prefix) && !listed[k] {
			delete(c.m, k)
			c.used -= c.size(v)
		}
	}
}
