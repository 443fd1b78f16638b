package metricstore

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/prometheus/common/model"
	"github.com/prometheus/otlptranslator"
	"github.com/prometheus/prometheus/model/metadata"
)

// Bounds of the metadata kept: help text is cut to maxHelpBytes; a family
// beyond maxMetaFamilies, a family's variant beyond maxMetaVariants
// (another help text or unit from another producer), or anything past
// maxMetaBytes in all is not recorded.
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
// after a restart as series arrive again, and never shrinks.
type metaSet struct {
	mu       sync.RWMutex
	families map[string][]metadata.Metadata
	bytes    int
}

func (m *metaSet) record(family string, md metadata.Metadata) {
	m.mu.RLock()
	known := slices.Contains(m.families[family], md)
	m.mu.RUnlock()
	if known {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.families == nil {
		m.families = make(map[string][]metadata.Metadata)
	}
	v, ok := m.families[family]
	size := len(md.Help) + len(md.Unit) + len(md.Type) + 64
	if !ok {
		size += len(family)
	}
	if slices.Contains(v, md) || len(v) >= maxMetaVariants || !ok && len(m.families) >= maxMetaFamilies || m.bytes+size > maxMetaBytes {
		return
	}
	m.families[family] = append(v, md)
	m.bytes += size
}

// familyMeta is a family's metadata waiting for its request to commit.
type familyMeta struct {
	family string
	md     metadata.Metadata
}

// Metadata returns the metadata recorded for each metric family, as
// Prometheus' /api/v1/metadata gives it: only the family metric if it is
// not empty; at most limit families if limit >= 0 (in name order) and at
// most limitPerMetric entries per family if limitPerMetric > 0. The result
// is the caller's.
func (s *Store) Metadata(metric string, limit, limitPerMetric int) map[string][]metadata.Metadata {
	m := &s.meta
	m.mu.RLock()
	names := make([]string, 0, len(m.families))
	if metric != "" {
		if _, ok := m.families[metric]; ok {
			names = append(names, metric)
		}
	} else {
		for name := range m.families {
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
	for _, name := range names {
		v := m.families[name]
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
