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
// that overlap [start, end), sorted. It reads one column of each file.
func (r *Reader) Services(ctx context.Context, tenant string, start, end time.Time) ([]string, error) {
	seen := map[string]struct{}{}
	fresh := func(fs *freshSpan) { seen[fs.service] = struct{}{} }
	err := r.eachFile(ctx, tenant, start, end, []string{"service_name"}, fresh, func(vals [][]parquet.Value) {
		for _, v := range vals[0] {
			if _, ok := seen[string(v.ByteArray())]; !ok {
				seen[string(v.ByteArray())] = struct{}{}
			}
		}
	})
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out, err
}

// Operations returns the operations of service's spans (all services if
// service is empty) of tenant in the partitions that overlap [start,
// end), sorted by name then kind; kind, if not empty, keeps those of
// that kind only.
func (r *Reader) Operations(ctx context.Context, tenant, service, kind string, start, end time.Time) ([]Operation, error) {
	seen := map[Operation]struct{}{}
	fresh := func(fs *freshSpan) {
		op := Operation{Name: string(fs.f.Name), Kind: kindName(fs.f.Kind)}
		if (service == "" || fs.service == service) && (kind == "" || op.Kind == kind) {
			seen[op] = struct{}{}
		}
	}
	err := r.eachFile(ctx, tenant, start, end, []string{"service_name", "name", "kind"}, fresh, func(vals [][]parquet.Value) {
		for i, v := range vals[0] {
			if service != "" && string(v.ByteArray()) != service {
				continue
			}
			op := Operation{Name: string(vals[1][i].ByteArray()), Kind: string(vals[2][i].ByteArray())}
			if kind == "" || op.Kind == kind {
				seen[op] = struct{}{}
			}
		}
	})
	out := make([]Operation, 0, len(seen))
	for op := range seen {
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b Operation) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind)) })
	return out, err
}

// eachFile calls fresh with each span not in the lake's files yet (of
// any time), then fn with the values of the top-level columns named cols,
// row group by row group, of every version-2 traces file of tenant in the
// partitions that overlap [start, end).
func (r *Reader) eachFile(ctx context.Context, tenant string, start, end time.Time, cols []string,
	fresh func(*freshSpan), fn func([][]parquet.Value)) error {
	vals := make([][]parquet.Value, len(cols))
	q := r.newQuery(tenant, start, end)
	err := q.fresh(ctx, func(p []byte) error {
		return eachFreshSpan(p, func(fs *freshSpan) error { fresh(fs); return nil })
	})
	if err != nil {
		return err
	}
	return q.eachFile(ctx, func(_ lake.DataFile, pf *parquet.File) error {
		idx, err := columnIndexes(pf, cols)
		if err != nil {
			return err
		}
		for _, rg := range pf.RowGroups() {
			for i, ci := range idx {
				if vals[i], err = columnValues(rg.ColumnChunks()[ci], vals[i][:0]); err != nil {
					return fmt.Errorf("column %s: %w", cols[i], err)
				}
			}
			fn(vals)
		}
		return nil
	})
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
