package lakeread

import (
	"context"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// modifier is a bucket that tells when the names under a prefix last
// changed, and which directories a prefix holds: bucket.Local, by its
// directories' modification times.
type modifier interface {
	Modified(ctx context.Context, prefix string) (time.Time, error)
	Subdirs(ctx context.Context, prefix string) ([]string, error)
}

// hourPrefixes returns the prefixes of the hour partitions under a
// tenant's prefix (<date>/<hour>/ two levels down), from bucket b's
// directories; ok false if b cannot tell (then the tenant's tree is
// listed whole). Directories that are no partitions' are listed as
// prefixes too and hold no data file: lake.DataFiles skips what it
// cannot parse.
func hourPrefixes(ctx context.Context, b any, tenantPrefix string) (out []string, ok bool, err error) {
	md, ok := b.(modifier)
	if !ok {
		return nil, false, nil
	}
	dates, err := md.Subdirs(ctx, tenantPrefix)
	if err != nil {
		return nil, true, err
	}
	for _, d := range dates {
		hours, err := md.Subdirs(ctx, tenantPrefix+d+"/")
		if err != nil {
			return nil, true, err
		}
		for _, h := range hours {
			out = append(out, tenantPrefix+d+"/"+h+"/")
		}
	}
	return out, true, nil
}

// listings keeps the listing of hour partitions that have not changed,
// so that a query over many hours does not walk and stat every file of
// each again (most of a rare needle's time over 10M logs). A listing is
// used again while its directory's modification time is the one read
// before it was listed; it is kept only if that time was at least
// racyWindow old when listed, so that a change in the same tick of the
// file system's clock (which would leave the time as it was) cannot
// hide behind it: a later change sets a later time.
type listings struct {
	mu sync.Mutex
	m  map[string]listing
}

type listing struct {
	stamp time.Time
	files []lake.DataFile // shared: read only
}

const (
	racyWindow  = 2 * time.Second
	maxListings = 4096 // hour prefixes kept; past it all are dropped
)

// hour returns the data files under hour prefix of bucket b (as
// lake.DataFiles), from the kept listing when its directory has not
// changed. The slice is shared: the caller must not modify it.
func (l *listings) hour(ctx context.Context, b any, list func() ([]lake.DataFile, error), prefix string) ([]lake.DataFile, error) {
	md, ok := b.(modifier)
	if !ok {
		return list()
	}
	stamp, err := md.Modified(ctx, prefix)
	if err != nil {
		return list() // missing, or unreadable: the listing says
	}
	l.mu.Lock()
	c, hit := l.m[prefix]
	l.mu.Unlock()
	if hit && c.stamp.Equal(stamp) {
		return c.files, nil
	}
	now := time.Now()
	files, err := list()
	if err != nil || now.Sub(stamp) < racyWindow {
		return files, err
	}
	l.mu.Lock()
	if l.m == nil || len(l.m) >= maxListings {
		l.m = map[string]listing{}
	}
	l.m[prefix] = listing{stamp, files}
	l.mu.Unlock()
	return files, nil
}
