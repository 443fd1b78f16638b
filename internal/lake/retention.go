package lake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Retention bounds what a lake keeps. What is removed is always a whole
// hour partition, <root>/<signal>/tenant=<t>/date=YYYY-MM-DD/hour=HH, of
// any signal and tenant.
type Retention struct {
	// MaxAge removes the partitions whose hour ended more than MaxAge
	// ago. 0: no age limit.
	MaxAge time.Duration
	// TenantMaxAge, if set, gives a tenant's own MaxAge by its
	// partition name (tenant=<name>); 0 keeps MaxAge for it. A tenant
	// may keep less than MaxAge or more.
	TenantMaxAge func(tenant string) time.Duration
	// MaxSize then removes partitions while the lake's Parquet files
	// hold more than MaxSize bytes: first those more than an hour in the
	// future (records from clients whose clocks are wrong, farthest
	// first), then the oldest. The current and the next hour are kept
	// whatever their size. 0: no size limit.
	MaxSize int64
}

// Pruned tells what one Prune removed and what it left.
type Pruned struct {
	Partitions int   // hour partitions removed
	Files      int   // Parquet files in them
	Bytes      int64 // bytes of those files
	Temps      int   // stale temporary files of crashed writes removed
	Kept       int64 // Parquet bytes left in the lake
	KeptFiles  int   // Parquet files left in the lake
}

// trashDir is where the local bucket moves a partition Prune removes
// before deleting it (bucket.Local.DeletePrefix), so that a reader globbing
// the lake sees all of a partition or none of it, and a crash mid-delete
// leaves nothing half-removed in the tree.
const trashDir = bucket.TrashDir

// staleTemp is the age past which a hidden temporary file (.*.tmp: a
// Writer's or a merge's scratch file, an upload's) is taken for the
// leftover of a crashed write. Writes take seconds; the margin keeps a
// Prune from removing the file of a write by another process (wirehouse
// ingest into the same root).
const staleTemp = time.Hour

// partitionUsage is one hour partition found in the lake, with the count
// and bytes of its Parquet files.
type partitionUsage struct {
	partition
	prefix string // partition.dir(), computed once
	files  int
	bytes  int64
}

// Prune applies r to the lake at root as of now: it removes the hour
// partitions that are too old, then the oldest ones while the lake is over
// its size, and the directories that leaves empty. It also removes
// temporary files of crashed writes older than an hour, and what an
// interrupted Prune left in <root>/.trash. Entries whose names are not the
// lake's layout are left alone.
//
// Prune must not run while a Writer writes into a partition it may remove;
// the caller serializes the two (the lake loader of wirehouse serve holds
// one lock over both).
func Prune(root string, r Retention, now time.Time) (Pruned, error) {
	return PruneBucket(context.Background(), bucket.NewLocal(root), r, now)
}

// PruneBucket is Prune of the lake in bucket b. The debris of crashed
// writes and deletes is removed when b is a bucket.Sweeper; a partition is
// removed at once when b is a bucket.PrefixDeleter, else object by object
// (a failure then leaves part of it, which the next pass removes).
func PruneBucket(ctx context.Context, b bucket.Bucket, r Retention, now time.Time) (Pruned, error) {
	p, _, err := PruneUsage(ctx, b, r, now)
	return p, err
}

// Usage is what a lake keeps of one signal and tenant.
type Usage struct {
	Signal, Tenant string
	Files          int   // Parquet files
	Bytes          int64 // their bytes
}

// PruneUsage is PruneBucket that also returns, from the same listing,
// what the lake keeps afterwards by signal and tenant, sorted by signal
// then tenant (nil when it fails). The slice is the caller's.
func PruneUsage(ctx context.Context, b bucket.Bucket, r Retention, now time.Time) (Pruned, []Usage, error) {
	var p Pruned
	if r.MaxAge < 0 || r.MaxSize < 0 {
		return p, nil, errors.New("prune lake: negative retention")
	}
	if s, ok := b.(bucket.Sweeper); ok {
		n, err := s.Sweep(ctx, now.Add(-staleTemp))
		p.Temps = n
		if err != nil {
			return p, nil, fmt.Errorf("prune lake: %w", err)
		}
	}
	parts, err := listPartitions(ctx, b)
	if err != nil {
		return p, nil, fmt.Errorf("prune lake: %w", err)
	}
	slices.SortFunc(parts, func(a, b partitionUsage) int {
		return cmp.Or(a.hour.Compare(b.hour), strings.Compare(a.prefix, b.prefix))
	})
	var total int64
	for _, pt := range parts {
		total += pt.bytes
		p.KeptFiles += pt.files
	}
	// Removal order for the size limit: the future beyond the next hour,
	// farthest first, then the past, oldest first.
	current := now.UTC().Truncate(time.Hour)
	next := current.Add(time.Hour)
	split := len(parts)
	for split > 0 && parts[split-1].hour.After(next) {
		split--
	}
	order := slices.Clone(parts[split:])
	slices.Reverse(order)
	order = append(order, parts[:split]...)
	removed := map[string]bool{}
	for _, pt := range order {
		maxAge := r.MaxAge
		if r.TenantMaxAge != nil {
			if d := r.TenantMaxAge(pt.tenant); d > 0 {
				maxAge = d
			}
		}
		old := maxAge > 0 && !pt.hour.Add(time.Hour).After(now.Add(-maxAge))
		over := r.MaxSize > 0 && total > r.MaxSize && (pt.hour.Before(current) || pt.hour.After(next))
		if !old && !over {
			continue
		}
		if err := deletePartition(ctx, b, pt.prefix); err != nil {
			p.Kept = total
			return p, nil, fmt.Errorf("prune lake: %w", err)
		}
		removed[pt.prefix] = true
		total -= pt.bytes
		p.Partitions++
		p.Files += pt.files
		p.Bytes += pt.bytes
		p.KeptFiles -= pt.files
	}
	p.Kept = total
	return p, usageOf(parts, removed), nil
}

// usageOf sums the partitions but those removed by signal and tenant.
func usageOf(parts []partitionUsage, removed map[string]bool) []Usage {
	var out []Usage
	at := map[[2]string]int{}
	for _, pt := range parts {
		if removed[pt.prefix] {
			continue
		}
		k := [2]string{pt.signal, pt.tenant}
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, Usage{Signal: pt.signal, Tenant: pt.tenant})
		}
		out[i].Files += pt.files
		out[i].Bytes += pt.bytes
	}
	slices.SortFunc(out, func(a, b Usage) int {
		return cmp.Or(strings.Compare(a.Signal, b.Signal), strings.Compare(a.Tenant, b.Tenant))
	})
	return out
}

// listPartitions lists the lake's hour partitions, in no particular order,
// with the count and bytes of their Parquet files. The slice is the
// caller's.
func listPartitions(ctx context.Context, b bucket.Bucket) ([]partitionUsage, error) {
	byDir := map[string]*partitionUsage{}
	for a, err := range b.List(ctx, "") {
		if err != nil {
			return nil, err
		}
		pt, file, ok := parseObject(a.Name)
		if !ok {
			continue
		}
		dir := pt.dir()
		u := byDir[dir]
		if u == nil {
			u = &partitionUsage{partition: pt, prefix: dir}
			byDir[dir] = u
		}
		if isParquetFile(file) {
			u.files++
			u.bytes += a.Size
		}
	}
	parts := make([]partitionUsage, 0, len(byDir))
	for _, u := range byDir {
		parts = append(parts, *u)
	}
	return parts, nil
}

// deletePartition deletes every object of the partition dir.
func deletePartition(ctx context.Context, b bucket.Bucket, dir string) error {
	if pd, ok := b.(bucket.PrefixDeleter); ok {
		return pd.DeletePrefix(ctx, dir+"/")
	}
	var names []string
	for a, err := range b.List(ctx, dir+"/") {
		if err != nil {
			return err
		}
		names = append(names, a.Name)
	}
	for _, name := range names {
		if err := b.Delete(ctx, name); err != nil {
			return err
		}
	}
	return nil
}
