package lakeread

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/lake"
)

// Operation is a span name of a service and the kind of the spans that
// have it (an OTLP enum name, SPAN_KIND_SERVER).
type Operation struct {
	Name, Kind string
}

// Services returns the service names of tenant's spans in the partitions
// that overlap [start, end), and of the spans not in files yet, sorted.
func (r *Reader) Services(ctx context.Context, tenant string, start, end time.Time) ([]string, error) {
	seen := map[string]struct{}{}
	err := r.eachName(ctx, tenant, start, end, true, func(n spanName) { seen[n.service] = struct{}{} })
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, err
}

// Operations returns the operations of service's spans (all services if
// service is empty) of tenant in the partitions that overlap [start,
// end), and of the spans not in files yet, sorted by name then kind; kind,
// if not empty, keeps those of that kind only.
func (r *Reader) Operations(ctx context.Context, tenant, service, kind string, start, end time.Time) ([]Operation, error) {
	seen := map[Operation]struct{}{}
	err := r.eachName(ctx, tenant, start, end, false, func(n spanName) {
		if (service == "" || n.service == service) && (kind == "" || n.kind == kind) {
			seen[Operation{Name: n.name, Kind: n.kind}] = struct{}{}
		}
	})
	out := make([]Operation, 0, len(seen))
	for op := range seen {
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b Operation) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind)) })
	return out, err
}

// spanName is a service, span name and kind that spans of a file have.
type spanName struct{ service, name, kind string }

// nameCache keeps each file's distinct span names, and its services:
// listing the services of a lake of millions of spans is then a walk
// over a few names per file, each file read once (the service_name, name
// and kind columns).
type nameCache = boundedMemo[fileNamesOf]

// NamesMemoBytes bounds the span names and services a Reader keeps
// (nameCache); a file past it is read again at each listing.
const NamesMemoBytes = 64 << 20

// namesSize is what a file's names cost NamesMemoBytes.
func namesSize(n fileNamesOf) int64 {
	size := int64(64 + 48*len(n.names) + 16*len(n.services))
	for _, s := range n.names {
		size += int64(len(s.service) + len(s.name) + len(s.kind))
	}
	for _, s := range n.services {
		size += int64(len(s))
	}
	return size
}

// fileNamesOf is a file's distinct span names and services.
type fileNamesOf struct {
	names    []spanName
	services []string
}

// eachName calls fn with the span names of the fresh spans, then of each
// version-2 traces file of tenant in the partitions that overlap [start,
// end), from the cache or read once; with services, a file's names are
// only its services (spanName.service alone).
func (r *Reader) eachName(ctx context.Context, tenant string, start, end time.Time, services bool, fn func(spanName)) error {
	q := r.newQuery(tenant, start, end)
	err := q.fresh(ctx, func(p []byte) error {
		return eachFreshSpan(p, func(fs *freshSpan) error {
			fn(spanName{fs.service, string(fs.f.Name), kindName(fs.f.Kind)})
			return nil
		})
	})
	if err != nil {
		return err
	}
	files, err := q.list(ctx)
	if err != nil {
		return err
	}
	for _, f := range files {
		of, ok := r.names.get(keyOf(f))
		if !ok {
			err := q.file(ctx, f, func(_ lake.DataFile, pf *parquet.File) error {
				names, err := fileNames(pf)
				of = fileNamesOf{names: names}
				for _, n := range names {
					if !slices.Contains(of.services, n.service) {
						of.services = append(of.services, n.service)
					}
				}
				return err
			})
			if err != nil {
				return err
			}
			r.names.put(keyOf(f), of)
		}
		if services {
			for _, s := range of.services {
				fn(spanName{service: s})
			}
			continue
		}
		for _, n := range of.names {
			fn(n)
		}
	}
	return nil
}

// fileNames reads the distinct span names of a file.
func fileNames(pf *parquet.File) ([]spanName, error) {
	if isV1(pf) {
		return namesV1(pf)
	}
	cols := []string{"service_name", "name", "kind"}
	idx, err := columnIndexes(pf, cols)
	if err != nil {
		return nil, err
	}
	seen := map[spanName]struct{}{}
	vals := make([][]parquet.Value, len(cols))
	for _, rg := range pf.RowGroups() {
		for i, ci := range idx {
			if vals[i], err = columnValues(rg.ColumnChunks()[ci], vals[i][:0]); err != nil {
				return nil, fmt.Errorf("column %s: %w", cols[i], err)
			}
		}
		for i := range vals[0] {
			seen[spanName{string(vals[0][i].ByteArray()), string(vals[1][i].ByteArray()), string(vals[2][i].ByteArray())}] = struct{}{}
		}
	}
	out := make([]spanName, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	return out, nil
}

// columnValues appends every value of a column chunk to dst; byte arrays
// are copied (they would alias page buffers).
func columnValues(cc parquet.ColumnChunk, dst []parquet.Value) ([]parquet.Value, error) {
	pages := cc.Pages()
	defer pages.Close()
	buf := make([]parquet.Value, 1024)
	for {
		p, err := pages.ReadPage()
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, err
		}
		vr := p.Values()
		for {
			n, err := vr.ReadValues(buf)
			for _, v := range buf[:n] {
				dst = append(dst, v.Clone())
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				parquet.Release(p)
				return dst, err
			}
		}
		parquet.Release(p)
	}
}
