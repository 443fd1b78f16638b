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
// changed. It is a boundedMemo without a bound.
type fileMemo[V any] = boundedMemo[V]

// boundedMemo is fileMemo within a bound: a value is admitted while the
// values kept cost at most max bytes (size's), and kept until a listing
// no longer shows its file; a query over more files than fit evicts
// none of those kept. A nil size keeps every value. Safe for concurrent
// use; values are shared and must not be changed.
type boundedMemo[V any] struct {
	max  int64
	size func(V) int64 // nil: unbounded

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
	n := c.cost(v)
	c.mu.Lock()
	defer c.mu.Unlock()
	old, had := c.m[k]
	if had {
		c.used -= c.cost(old)
	}
	if c.size != nil && c.used+n > c.max {
		if had {
			delete(c.m, k)
		}
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
			c.used -= c.cost(v)
		}
	}
}

func (c *boundedMemo[V]) cost(v V) int64 {
	if c.size == nil {
		return 0
	}
	return c.size(v)
}

// held is what the values kept cost now.
func (c *boundedMemo[V]) held() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}
