package lake

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Retention bounds what a lake keeps. What is removed is always a whole
// hour partition, <root>/<signal>/tenant=<t>/date=YYYY-MM-DD/hour=HH, of
// any signal and tenant.
type Retention struct {
	// MaxAge removes the partitions whose hour ended more than MaxAge
	// ago. 0: no age limit.
	MaxAge time.Duration
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

// trashDir is where Prune moves a partition before deleting it, so that a
// reader globbing the lake sees all of a partition or none of it, and a
// crash mid-delete leaves nothing half-removed in the tree.
const trashDir = ".trash"

// staleTemp is the age past which a hidden .parquet.tmp file is taken for
// the leftover of a crashed write. Writes take seconds; the margin keeps a
// Prune from removing the file of a write by another process (wirehouse
// ingest into the same root).
const staleTemp = time.Hour

// partition is one hour partition found in the lake.
type partition struct {
	dir   string
	hour  time.Time
	files int
	bytes int64
}

// Prune applies r to the lake at root as of now: it removes the hour
// partitions that are too old, then the oldest ones while the lake is over
// its size, and the date directories that leaves empty. It also removes
// temporary files of crashed writes older than an hour, and what an
// interrupted Prune left in <root>/.trash. Entries whose names are not the
// lake's layout are left alone.
//
// Prune must not run while a Writer writes into a partition it may remove;
// the caller serializes the two (the lake loader of wirehouse serve holds
// one lock over both).
func Prune(root string, r Retention, now time.Time) (Pruned, error) {
	var p Pruned
	if r.MaxAge < 0 || r.MaxSize < 0 {
		return p, errors.New("prune lake: negative retention")
	}
	trash := filepath.Join(root, trashDir)
	if err := os.RemoveAll(trash); err != nil {
		return p, fmt.Errorf("prune lake: %w", err)
	}
	parts, temps, err := partitions(root, now)
	p.Temps = temps
	if err != nil {
		return p, err
	}
	slices.SortFunc(parts, func(a, b partition) int {
		return cmp.Or(a.hour.Compare(b.hour), strings.Compare(a.dir, b.dir))
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
	for _, pt := range order {
		old := r.MaxAge > 0 && !pt.hour.Add(time.Hour).After(now.Add(-r.MaxAge))
		over := r.MaxSize > 0 && total > r.MaxSize && (pt.hour.Before(current) || pt.hour.After(next))
		if !old && !over {
			continue
		}
		if err := removePartition(trash, pt.dir); err != nil {
			p.Kept = total
			return p, err
		}
		total -= pt.bytes
		p.Partitions++
		p.Files += pt.files
		p.Bytes += pt.bytes
		p.KeptFiles -= pt.files
		os.Remove(filepath.Dir(pt.dir)) // the date directory, if now empty
	}
	p.Kept = total
	os.Remove(trash) // empty now, unless a removal failed
	return p, nil
}

// partitions lists the lake's hour partitions with the count and bytes of
// their Parquet files, removing stale temporary files as it goes.
func partitions(root string, now time.Time) ([]partition, int, error) {
	var parts []partition
	temps := 0
	signals, err := readDirs(root, "")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil // nothing written yet
	}
	if err != nil {
		return nil, 0, err
	}
	for _, sig := range signals {
		tenants, err := readDirs(sig, "tenant=")
		if err != nil {
			return nil, temps, err
		}
		for _, tenant := range tenants {
			dates, err := readDirs(tenant, "date=")
			if err != nil {
				return nil, temps, err
			}
			for _, date := range dates {
				day, err := time.Parse("2006-01-02", strings.TrimPrefix(filepath.Base(date), "date="))
				if err != nil {
					continue
				}
				hours, err := readDirs(date, "hour=")
				if err != nil {
					return nil, temps, err
				}
				for _, hour := range hours {
					h, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(hour), "hour="))
					if err != nil || h < 0 || h > 23 || len(filepath.Base(hour)) != len("hour=HH") {
						continue
					}
					pt := partition{dir: hour, hour: day.Add(time.Duration(h) * time.Hour)}
					n, err := pt.scan(now)
					temps += n
					if err != nil {
						return nil, temps, err
					}
					parts = append(parts, pt)
				}
			}
		}
	}
	return parts, temps, nil
}

// readDirs returns the subdirectories of dir whose names start with
// prefix, leaving out hidden ones.
func readDirs(dir, prefix string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("prune lake: %w", err)
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") && strings.HasPrefix(e.Name(), prefix) {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out, nil
}

// scan counts the partition's Parquet files and their bytes and removes
// its stale temporary files, returning how many it removed.
func (pt *partition) scan(now time.Time) (int, error) {
	entries, err := os.ReadDir(pt.dir)
	if err != nil {
		return 0, fmt.Errorf("prune lake: %w", err)
	}
	removed := 0
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // renamed or removed meanwhile
		}
		if err != nil {
			return removed, fmt.Errorf("prune lake: %w", err)
		}
		switch {
		case strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".parquet.tmp"):
			if now.Sub(info.ModTime()) > staleTemp && os.Remove(filepath.Join(pt.dir, name)) == nil {
				removed++
			}
		case !strings.HasPrefix(name, ".") && strings.HasSuffix(name, ".parquet"):
			pt.files++
			pt.bytes += info.Size()
		}
	}
	return removed, nil
}

// removePartition moves dir into trash, whole, then deletes it there.
func removePartition(trash, dir string) error {
	if err := os.MkdirAll(trash, 0o755); err != nil {
		return fmt.Errorf("prune lake: %w", err)
	}
	rel, err := filepath.Rel(filepath.Dir(trash), dir)
	if err != nil {
		return fmt.Errorf("prune lake: %w", err)
	}
	dst := filepath.Join(trash, strings.ReplaceAll(filepath.ToSlash(rel), "/", "_"))
	if err := os.Rename(dir, dst); err != nil {
		return fmt.Errorf("prune lake: %w", err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("prune lake: %w", err)
	}
	return nil
}
