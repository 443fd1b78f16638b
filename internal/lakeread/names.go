package lakeread

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/otlpwire"
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
	err := r.eachFile(ctx, tenant, start, end, []string{"service_name"}, func(vals [][]parquet.Value) {
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
	err := r.eachFile(ctx, tenant, start, end, []string{"service_name", "name", "kind"}, func(vals [][]parquet.Value) {
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

// eachFile calls fn with the values of the top-level required columns
// named cols, row group by row group, of every version-2 traces file of
// tenant in the partitions that overlap [start, end).
func (r *Reader) eachFile(ctx context.Context, tenant string, start, end time.Time, cols []string, fn func([][]parquet.Value)) error {
	budget := &byteBudget{}
	budget.left.Store(r.cfg.MaxBytes)
	for a, err := range r.cfg.Bucket.List(ctx, lake.TenantPrefix(otlpwire.SignalTraces, tenant)) {
		if err != nil {
			return fmt.Errorf("lakeread: list the lake: %w", err)
		}
		f, ok := lake.ParseDataFile(a)
		if !ok || f.Tenant != tenant || !overlaps(f.Hour, start, end) {
			continue
		}
		if err := r.columnsOfFile(ctx, f, cols, budget, fn); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reader) columnsOfFile(ctx context.Context, f lake.DataFile, cols []string, budget *byteBudget, fn func([][]parquet.Value)) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("lakeread: read %s: damaged file: %v", f.Name, p)
		}
	}()
	obj, err := r.cfg.Bucket.Open(ctx, f.Name)
	if errors.Is(err, bucket.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("lakeread: open %s: %w", f.Name, err)
	}
	defer obj.Close()
	pf, err := parquet.OpenFile(budgetReader{obj, budget, r.cfg.MaxBytes}, obj.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return wrapLimit(fmt.Errorf("lakeread: read %s: %w", f.Name, err))
	}
	if v, _ := pf.Lookup(lake.SchemaVersionKey); v != "2" {
		return nil
	}
	idx := make([]int, len(cols))
	for i, c := range cols {
		lc, ok := pf.Schema().Lookup(c)
		if !ok {
			return fmt.Errorf("lakeread: %s: no column %s", f.Name, c)
		}
		idx[i] = lc.ColumnIndex
	}
	vals := make([][]parquet.Value, len(cols))
	for _, rg := range pf.RowGroups() {
		for i, ci := range idx {
			if vals[i], err = columnValues(rg.ColumnChunks()[ci], vals[i][:0]); err != nil {
				return wrapLimit(fmt.Errorf("lakeread: %s: column %s: %w", f.Name, cols[i], err))
			}
		}
		fn(vals)
	}
	return nil
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
