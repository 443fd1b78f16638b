package spool

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// register registers the spool's metrics with reg; they read Stats when
// scraped.
func (s *Spool) register(reg prometheus.Registerer) error {
	gauge := func(name, help string, f func(Stats) uint64) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, func() float64 { return float64(f(s.Stats())) })
	}
	counter := func(name, help string, f func(Stats) uint64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, func() float64 { return float64(f(s.Stats())) })
	}
	for _, c := range []prometheus.Collector{
		gauge("wirehouse_spool_bytes", "Size of the spool's segment files.", func(st Stats) uint64 { return uint64(st.Bytes) }),
		gauge("wirehouse_spool_segments", "Spool segment files.", func(st Stats) uint64 { return uint64(st.Segments) }),
		gauge("wirehouse_spool_last_seq", "Sequence number of the newest spooled record.", func(st Stats) uint64 { return st.LastSeq }),
		counter("wirehouse_spool_appends_total", "Records appended to the spool since start.", func(st Stats) uint64 { return st.Appends }),
		counter("wirehouse_spool_syncs_total", "Fsync batches of spool data since start.", func(st Stats) uint64 { return st.Syncs }),
		counter("wirehouse_spool_tapped_total", "Records every consumer took as they were appended, with no copy kept in memory for reading back.", func(st Stats) uint64 { return st.Tapped }),
		counter("wirehouse_spool_full_total", "Appends refused because the spool was at its size limit.", func(st Stats) uint64 { return st.Full }),
	} {
		if err := reg.Register(c); err != nil {
			return fmt.Errorf("register spool metrics: %w", err)
		}
	}
	return nil
}
