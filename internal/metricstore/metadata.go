package metricstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/model/metadata"

	"github.com/wirehouse/wirehouse/internal/tenant"
)

// Bounds of the metadata kept: help text is cut to maxHelpBytes; a family
// beyond maxMetaFamilies, a family's variant beyond maxMetaVariants
// (another help text or unit from another producer), or anything past
// maxMetaBytes in all is not recorded. The families and bytes bounds are
// of all tenants together.
const (
	maxMetaFamilies = 100_000
	maxMetaVariants = 10
	maxHelpBytes    = 4 << 10
	maxMetaBytes    = 32 << 20
)

// metaSet holds the metadata (type, unit, help) of each metric family, as
// Prometheus' OTLP translator derives it, in memory. It is recorded when a
// request that created a series of the family ends, so steady-state
// ingest does not touch it: a description that changes while the family's
// series are known is not picked up until the cached series lose their
// references (at the next head truncation, see Store.syncCache, or a
// restart), when their next samples count as creating them. It is rebuilt
// after a restart as series arrive again, and never shrinks. Each tenant
// has its own families, as it has its own series.
type metaSet struct {
	mu       sync.RWMutex
	tenants  map[string]map[string][]metadata.Metadata // tenant → family → variants
	families int                                       // of all tenants
	bytes    int
}

func (m *metaSet) record(tenant, family string, md metadata.Metadata) {
	m.mu.RLock()
	known := slices.Contains(m.tenants[tenant][family], md)
	m.mu.RUnlock()
	if known {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tenants == nil {
		m.tenants = make(map[string]map[string][]metadata.Metadata)
	}
	fams := m.tenants[tenant]
	v, ok := fams[family]
	size := len(md.Help) + len(md.Unit) + len(md.Type) + 64
	if !ok {
		size += len(family)
	}
	if fams == nil {
		size += len(tenant)
	}
	if slices.Contains(v, md) || len(v) >= maxMetaVariants || !ok && m.families >= maxMetaFamilies || m.bytes+size > maxMetaBytes {
		return
	}
	if fams == nil {
		fams = make(map[string][]metadata.Metadata)
		m.tenants[tenant] = fams
	}
	if !ok {
		m.families++
	}
	fams[family] = append(v, md)
	m.bytes += size
}

// familyMeta is a family's metadata waiting for its request to commit.
type familyMeta struct {
	family string
	md     metadata.Metadata
}

// Metadata returns the metadata recorded for each metric family of the
// tenant ctx carries (tenant.FromContext), as Prometheus' /api/v1/metadata
// gives it: only the family metric if it is not empty; at most limit
// families if limit >= 0 (in name order) and at most limitPerMetric entries
// per family if limitPerMetric > 0. The result is the caller's.
func (s *Store) Metadata(ctx context.Context, metric string, limit, limitPerMetric int) map[string][]metadata.Metadata {
	m := &s.meta
	t := tenant.FromContext(ctx)
	m.mu.RLock()
	fams := m.tenants[t]
	names := make([]string, 0, len(fams))
	if metric != "" {
		if _, ok := fams[metric]; ok {
			names = append(names, metric)
		}
	} else {
		for name := range fams {
			names = append(names, name)
		}
	}
	m.mu.RUnlock()
	slices.Sort(names) // outside the lock: appends may be waiting
	if limit >= 0 && len(names) > limit {
		names = names[:limit]
	}
	out := make(map[string][]metadata.Metadata, len(names))
	m.mu.RLock()
	defer m.mu.RUnlock()
	fams = m.tenants[t] // the same map: tenants are never removed
	for _, name := range names {
		v := fams[name]
		if limitPerMetric > 0 && len(v) > limitPerMetric {
			v = v[:limitPerMetric]
		}
		out[name] = slices.Clone(v)
	}
	return out
}

// metricMetadata is Prometheus' metadata for the current metric: its type
// (metricTypes), its unit as otlptranslator.UnitNamer gives it and its
// description as help.
func (a *appendState) metricMetadata() metadata.Metadata {
	mf := &a.mf
	var units otlptranslator.UnitNamer
	_, typ := metricTypes(mf)
	return metadata.Metadata{
		Type: typ,
		Unit: units.Build(validString(mf.Unit)),
		Help: validString(mf.Description[:min(len(mf.Description), maxHelpBytes)]),
	}
}

// targetInfoMetadata is what Prometheus' translator gives target_info.
var targetInfoMetadata = metadata.Metadata{Type: model.MetricTypeGauge, Help: "Target metadata"}

// validString is b as a string, invalid UTF-8 replaced, so that the API
// writes valid JSON.
func validString(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
