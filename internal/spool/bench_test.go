package spool

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// BenchmarkSpoolAppend measures Append into a temporary directory with
// default segments (64 MiB) and no limit. MB/s counts payload bytes.
func BenchmarkSpoolAppend(b *testing.B) {
	type bench struct {
		sync      SyncPolicy
		appenders int
	}
	for _, bc := range []bench{{SyncAlways, 1}, {SyncAlways, 4}, {SyncInterval, 1}, {SyncInterval, 4}, {SyncNever, 1}} {
		for _, size := range []int{1 << 10, 64 << 10} {
			name := fmt.Sprintf("sync=%v/size=%dKiB/appenders=%d", bc.sync, size>>10, bc.appenders)
			b.Run(name, func(b *testing.B) {
				s, err := Open(config(b.TempDir(), func(c *Config) { c.Sync = bc.sync }))
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				payload := payloadOf(1, size)
				recv := time.Now()
				b.SetBytes(int64(size))
				b.ResetTimer()
				var n atomic.Int64
				var wg sync.WaitGroup
				for range bc.appenders {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for n.Add(1) <= int64(b.N) {
							if _, err := s.Append(otlpwire.SignalLogs, "tenant-1", recv, payload); err != nil {
								b.Error(err)
								return
							}
						}
					}()
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "records/s")
				if st := s.Stats(); st.Syncs > 0 {
					b.ReportMetric(float64(st.Appends)/float64(st.Syncs), "records/fsync")
				}
			})
		}
	}
}
