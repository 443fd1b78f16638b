package serve

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/internal/lakeload"
	"github.com/wirehouse/wirehouse/internal/lakeread"
)

// Memory the ceiling counts besides the limits (docs/ARCHITECTURE.md,
// "Memory"): the Go runtime, the metric store's head and caches of a small
// store, pooled buffers, goroutines of idle connections.
const baseMemory = 96 << 20

// lakeRowFactor is the memory the lake loader holds per protobuf byte it
// has buffered: decoded rows and their arenas, and the Parquet encoder's
// buffers while a batch is written.
const lakeRowFactor = 3

// MemoryCeiling is the most memory serve should hold with these settings,
// whatever clients send (docs/ARCHITECTURE.md, "Memory"):
//
//	base + max_inflight + largest request + 2 × 3 × (lake.max_buffer + 8 MiB)
//	     + spool.tail_size + 16 MiB + forward destinations × 2 × 64 MiB
//	     + limits.queries.memory + 32 MiB + 128 MiB + 116 MiB
//
// the base; the in-flight budget (every request's bytes, decompressed
// copies and JSON decoding, reserved before they are held); the spool
// record the lake loader reads, up to the largest request; and the lake
// loader's two batches, each up to the max buffer plus the request under
// 8 MiB that crossed it (larger ones are decoded 4 MiB at a time), as
// decoded rows; the newest spool records kept in memory, and those of
// them the lake loader keeps for queries after the spool let them go
// (lakeload.FreshMemory); and each
// forward destination's window of bytes read and not yet delivered,
// with the batches being sent (about as much again); and the queries'
// budget (querybudget): what the queries admitted hold, each charged
// with the records, candidates, spans, lines and series it keeps, or for
// PromQL bounded by its samples (a slot's share at 16 bytes a sample);
// and the lake reader's cache of column chunk readers, their dictionaries
// and last pages, and bloom filters (lakeread.DefaultChunkCacheBytes), the
// parsed footers of the files it keeps open (lakeread.DefaultOpenFileBytes),
// and the tables of logs files' grams regions, their counts, spans files'
// trace-id indexes, span names and resource attribute values
// (lakeread.IndexCacheBytes).
// The metric store's head grows with the series stored and is not
// bounded by it.
func (c Config) MemoryCeiling() int64 {
	largest := max(int64(c.Limits.MaxDecompressedSize), int64(c.OTLP.GRPC.MaxRecvMsgSize))
	lake := 2 * lakeRowFactor * (int64(c.Lake.MaxBuffer) + 8<<20)
	forward := int64(len(c.Forward)) * 2 * forwardWindow
	return baseMemory + int64(c.Limits.MaxInflight) + largest + lake + int64(c.Spool.TailSize) + lakeload.FreshMemory + forward +
		int64(c.Limits.Queries.Memory) + lakeread.DefaultChunkCacheBytes + lakeread.DefaultOpenFileBytes + lakeread.IndexCacheBytes
}

// executableMemory is what RSS counts of the executable's own file (its
// code and read-only data, paged in as it runs: about 37 MiB at start,
// 39 MiB after TestServeMemoryCeiling's attack) and the Go runtime's soft
// limit does not: the limit derived from the ceiling leaves it out.
const executableMemory = 48 << 20

// forwardWindow is each forward destination's window
// (forward.Config.Window, its default).
const forwardWindow = 64 << 20

// memoryLimit returns the soft memory limit to set and where it came
// from: "GOMEMLIMIT" (the environment's, left as it is: limit 0),
// "memory_limit" (the setting), "cgroup" (90 % of the cgroup's limit) or
// "ceiling" (95 % of MemoryCeiling less the queries' budget, the lake
// reader's filling caches and the executable's pages, executableMemory,
// which RSS counts and the runtime does not: serve raises it by 95 % of
// what the running
// queries reserve and those caches hold,
// queryMemoryLimit, so that the collector keeps garbage under what the
// ceiling allows now, not under what it would allow if every query slot
// were full, with a margin for what the runtime holds besides).
func (c Config) memoryLimit() (limit int64, source string) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return 0, "GOMEMLIMIT"
	}
	if c.Limits.MemoryLimit > 0 {
		return int64(c.Limits.MemoryLimit), "memory_limit"
	}
	if n, ok := cgroupMemoryLimit(); ok {
		return n / 10 * 9, "cgroup"
	}
	return (c.MemoryCeiling() - int64(c.Limits.Queries.Memory) - lakeread.FillingCacheBytes - executableMemory) / 20 * 19, "ceiling"
}

// queryMemoryLimit returns the query budget's OnReserved when the soft
// limit comes from the ceiling: it sets the limit to base (memoryLimit's)
// plus what the running queries have reserved. Nil otherwise.
//
// held, if not nil, gives what the lake reader's filling caches hold
// (lakeread.Reader.HeldBytes), which the limit follows too.
func (c Config) queryMemoryLimit(source string, base int64, held func() int64) func(int64) {
	if source != "ceiling" {
		return nil
	}
	return func(reserved int64) {
		if held != nil {
			reserved += held()
		}
		debug.SetMemoryLimit(base + reserved/20*19)
	}
}

// applyMemoryLimit sets the Go runtime's soft memory limit and returns the
// limit in force and its source.
func (c Config) applyMemoryLimit() (int64, string) {
	limit, source := c.memoryLimit()
	if limit > 0 {
		debug.SetMemoryLimit(limit)
	}
	return debug.SetMemoryLimit(-1), source
}

// cgroupMemoryLimit reads the memory limit of this process's cgroup:
// memory.max (cgroup v2) or memory.limit_in_bytes (v1). ok is false when
// there is none, or it cannot be read.
func cgroupMemoryLimit() (int64, bool) {
	rel := "/"
	if b, err := os.ReadFile("/proc/self/cgroup"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if p, ok := strings.CutPrefix(sc.Text(), "0::"); ok { // v2
				rel = p
			}
		}
	}
	for _, f := range []string{
		filepath.Join("/sys/fs/cgroup", rel, "memory.max"),
		"/sys/fs/cgroup/memory.max",
		"/sys/fs/cgroup/memory/memory.limit_in_bytes",
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, false
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 { // v1 says "unlimited" with a huge number
			return 0, false
		}
		return n, true
	}
	return 0, false
}
