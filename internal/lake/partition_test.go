package lake

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestPartitionLayout: the names the lake writes, byte for byte, as
// existing lakes and DuckDB's hive partitioning read them.
func TestPartitionLayout(t *testing.T) {
	for _, c := range []struct {
		sig    otlpwire.Signal
		tenant string
		at     time.Time
		file   string
		want   string
	}{
		{otlpwire.SignalLogs, "acme", time.Date(2030, 5, 1, 10, 59, 59, 0, time.UTC), parquetFile(RangeName(1, 45)), "logs/tenant=acme/date=2030-05-01/hour=10/00000000000000000001-00000000000000000045.parquet"},
		{otlpwire.SignalTraces, "team-a.b_c", time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), mergeName("", 7, 9, 2), "traces/tenant=team-a.b_c/date=2026-01-02/hour=03/00000000000000000007-00000000000000000009-c2.parquet"},
		{otlpwire.SignalLogs, "t", time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), intentFile, "logs/tenant=t/date=1970-01-01/hour=00/.compact"},
		{otlpwire.SignalLogs, "t", time.Date(2099, 12, 31, 23, 30, 0, 0, time.UTC), mergeName("", 1, 2, 1), "logs/tenant=t/date=2099-12-31/hour=23/00000000000000000001-00000000000000000002-c.parquet"},
	} {
		t.Run(c.want, func(t *testing.T) {
			got := partitionOf(c.sig, c.tenant, c.at.Unix()/3600).object(c.file)
			if got != c.want {
				t.Fatalf("built %s", got)
			}
		})
	}
}

// TestPartitionRoundTrip: every name built parses back to its partition
// and file, for every signal the lake writes, a range of tenants and
// every hour of several days (a leap day and a year's end among them).
func TestPartitionRoundTrip(t *testing.T) {
	tenants := []string{"a", "acme", "Team-42", "x.y_z", "...", "-", strings.Repeat("t", 128)}
	var hours []int64
	for _, day := range []time.Time{
		time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(2099, 12, 31, 0, 0, 0, 0, time.UTC),
	} {
		for h := range 24 {
			hours = append(hours, day.Unix()/3600+int64(h))
		}
	}
	files := []string{parquetFile(RangeName(1, 1)), mergeName("", 3, 99, 7), parquetFile(PartName(5, 5, 3)), parquetFile(autoID(testNow, 42)), intentFile, "notes.txt"}
	for _, sig := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces} {
		t.Run(sig.String(), func(t *testing.T) {
			for _, tenant := range tenants {
				for _, hour := range hours {
					p := partitionOf(sig, tenant, hour)
					if p.hour.Unix() != hour*3600 || p.hour.Location() != time.UTC {
						t.Fatalf("partitionOf(%d).hour = %v", hour, p.hour)
					}
					for _, file := range files {
						name := p.object(file)
						got, gotFile, ok := parseObject(name)
						if !ok || got.signal != p.signal || got.tenant != p.tenant || !got.hour.Equal(p.hour) || gotFile != file {
							t.Fatalf("parseObject(%q) = %+v, %q, %v; want %+v, %q", name, got, gotFile, ok, p, file)
						}
						if got.dir() != name[:strings.LastIndexByte(name, '/')] {
							t.Fatalf("dir %q of %q", got.dir(), name)
						}
					}
				}
			}
		})
	}
}

// TestParseObjectJunk: names outside the layout do not parse.
func TestParseObjectJunk(t *testing.T) {
	for _, name := range []string{
		"",
		"logs",
		"logs/tenant=a/date=2026-01-01/hour=00",
		"logs/tenant=a/date=2026-01-01/hour=00/",
		"logs/tenant=a/date=2026-01-01/hour=00/sub/x.parquet",
		"/tenant=a/date=2026-01-01/hour=00/x.parquet",
		".trash/tenant=a/date=2026-01-01/hour=00/x.parquet",
		"logs/tenant-a/date=2026-01-01/hour=00/x.parquet",
		"logs/a/date=2026-01-01/hour=00/x.parquet",
		"logs/tenant=a/date=someday/hour=00/x.parquet",
		"logs/tenant=a/date=2026-1-01/hour=00/x.parquet",
		"logs/tenant=a/date=2026-02-30/hour=00/x.parquet",
		"logs/tenant=a/day=2026-01-01/hour=00/x.parquet",
		"logs/tenant=a/date=2026-01-01/hour=7/x.parquet",
		"logs/tenant=a/date=2026-01-01/hour=24/x.parquet",
		"logs/tenant=a/date=2026-01-01/hour=+1/x.parquet",
		"logs/tenant=a/date=2026-01-01/hour=-0/x.parquet",
		"logs/tenant=a/date=2026-01-01/hour=000/x.parquet",
		"logs/tenant=a/date=2026-01-01/minute=00/x.parquet",
		"README",
		".flush",
	} {
		t.Run(fmt.Sprintf("%q", name), func(t *testing.T) {
			if p, file, ok := parseObject(name); ok {
				t.Fatalf("parsed as %+v, %q", p, file)
			}
		})
	}
}

// TestFileNames: the loader's and merges' names parse with parseRange,
// others do not; Flush's are unique Parquet names.
func TestFileNames(t *testing.T) {
	for _, c := range []struct {
		name        string
		first, last uint64
		ok          bool
		node        string
	}{
		{parquetFile(RangeName(1, 5)), 1, 5, true, ""},
		{parquetFile(NodeName("node-a1", RangeName(1, 5))), 1, 5, true, "node-a1"},
		{parquetFile(NodeName("b", PartName(8, 8, 3))), 8, 8, true, "b"},
		{mergeName("z9", 1, 45, 2), 1, 45, true, "z9"},
		{"Node." + parquetFile(RangeName(1, 5)), 0, 0, false, ""},
		{"-a." + parquetFile(RangeName(1, 5)), 0, 0, false, ""},
		{"a.b." + parquetFile(RangeName(1, 5)), 0, 0, false, ""},
		{"." + parquetFile(RangeName(1, 5)), 0, 0, false, ""},
		{parquetFile(RangeName(7, 7) + "-p0"), 7, 7, true, ""},
		{parquetFile(RangeName(7, 7) + "-p12"), 7, 7, true, ""},
		{parquetFile(PartName(8, 8, 3)), 8, 8, true, ""},
		{mergeName("", 1, 45, 1), 1, 45, true, ""},
		{mergeName("", 1, 45, 2), 1, 45, true, ""},
		{mergeName("", 1, 45, 999), 1, 45, true, ""},
		{parquetFile(RangeName(18446744073709551615, 18446744073709551615)), 18446744073709551615, 18446744073709551615, true, ""},
		{RangeName(1, 5), 0, 0, false, ""},
		{RangeName(1, 5) + ".parquet.tmp", 0, 0, false, ""},
		{parquetFile(RangeName(0, 5)), 0, 0, false, ""},
		{parquetFile(RangeName(5, 4)), 0, 0, false, ""},
		{parquetFile(RangeName(1, 5) + "-x"), 0, 0, false, ""},
		{parquetFile(RangeName(1, 5) + "-c-1"), 0, 0, false, ""},
		{parquetFile(RangeName(1, 5) + "-p2x"), 0, 0, false, ""},
		{parquetFile(RangeName(1, 5) + "c"), 0, 0, false, ""},
		{"1-5.parquet", 0, 0, false, ""},
		{"0000000000000000000a-00000000000000000005.parquet", 0, 0, false, ""},
		{"../" + parquetFile(RangeName(1, 5)), 0, 0, false, ""},
		{"notes.txt", 0, 0, false, ""},
		{intentFile, 0, 0, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			node, first, last, ok := parseFile(c.name)
			if first != c.first || last != c.last || ok != c.ok || node != c.node {
				t.Fatalf("parseFile = %q, %d, %d, %v; want %q, %d, %d, %v", node, first, last, ok, c.node, c.first, c.last, c.ok)
			}
		})
	}
	if got, want := PartName(8, 8, 3), "00000000000000000008-00000000000000000008-p3"; got != want {
		t.Errorf("PartName = %s, want %s", got, want)
	}
	id := autoID(time.Date(2030, 5, 1, 10, 0, 0, 123, time.FixedZone("x", 3600)), 0xabc)
	if want := "20300501T090000.000000123Z-0000000000000abc"; id != want {
		t.Errorf("autoID = %s, want %s", id, want)
	}
	if !regexp.MustCompile(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{16}$`).MatchString(id) || !tenant.Valid(id) || !isParquetFile(parquetFile(id)) || isRange(parquetFile(id)) {
		t.Errorf("autoID %s: not a valid file id of its own kind", id)
	}
	for file, want := range map[string]bool{"a.parquet": true, ".a.parquet": false, intentFile: false, "a.parquet.tmp": false, "a.json": false} {
		if isParquetFile(file) != want {
			t.Errorf("isParquetFile(%q) = %v", file, !want)
		}
	}
}

// FuzzParseObject: whatever parses builds back to the same name.
func FuzzParseObject(f *testing.F) {
	f.Add("logs/tenant=acme/date=2030-05-01/hour=10/x.parquet")
	f.Add("traces/tenant=/date=2000-02-29/hour=23/.compact")
	f.Add("logs/tenant=a/date=2026-01-01/hour=24/x.parquet")
	f.Fuzz(func(t *testing.T, name string) {
		p, file, ok := parseObject(name)
		if ok && p.object(file) != name {
			t.Fatalf("%q parsed as %+v, %q, which builds %q", name, p, file, p.object(file))
		}
	})
}

// FuzzParseFile: a name parseFile accepts starts with its node's prefix
// and its range, and the node is a valid node name.
func FuzzParseFile(f *testing.F) {
	f.Add(parquetFile(NodeName("node-a", RangeName(1, 5))))
	f.Add(mergeName("b", 3, 9, 2))
	f.Add(parquetFile(PartName(8, 8, 3)))
	f.Add("a.b.00000000000000000001-00000000000000000002.parquet")
	f.Fuzz(func(t *testing.T, name string) {
		node, first, last, ok := parseFile(name)
		if !ok {
			return
		}
		if node != "" && !ValidNode(node) || first == 0 || last < first ||
			!strings.HasPrefix(name, NodeName(node, RangeName(first, last))) {
			t.Fatalf("%q parsed as node %q, %d-%d", name, node, first, last)
		}
	})
}
