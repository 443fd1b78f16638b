package lake

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// The lake's layout. Every name the lake reads or writes in its bucket is
// built and parsed in this file, and nowhere else:
//
//	<signal>/tenant=<tenant>/date=YYYY-MM-DD/hour=HH/<file>
//
// one Hive-style partition (DuckDB's hive_partitioning reads tenant, date
// and hour as columns) per signal ("logs", "traces"), tenant and UTC hour
// of the records' time. The files of a partition:
//
//	<first>-<last>.parquet        the loader's write of spool records first to last (RangeName, 20 digits each)
//	<first>-<last>-p<N>.parquet   part N of a large record written in parts (PartName)
//	<first>-<last>-c[N].parquet   a merge of such files (mergeName)
//	<node>.<first>-<last>….parquet the same, of node <node>'s loader, when
//	                              several nodes share one bucket (NodeName)
//	<time>-<random>.parquet       a Writer.Flush's (autoID)
//	<name>.parquet                a Writer.FlushAs(name)'s, generally
//	.compact                      the intent of a merge under way (intentFile)
//
// Names starting with "." are the lake's own bookkeeping, never data.

// partition is one hour partition of the lake.
type partition struct {
	signal string    // otlpwire.Signal.String(); parsing accepts any name
	tenant string    // tenant.Valid when written; parsing accepts any
	hour   time.Time // UTC, on the hour
}

// partitionOf is the partition of the signal's records of tenant in hour,
// counted in hours since the Unix epoch.
func partitionOf(sig otlpwire.Signal, tenant string, hour int64) partition {
	return partition{signal: sig.String(), tenant: tenant, hour: time.Unix(hour*3600, 0).UTC()}
}

// dir is the partition's prefix in the bucket, without a trailing slash:
// logs/tenant=acme/date=2030-05-01/hour=10.
func (p partition) dir() string {
	return p.signal + "/tenant=" + p.tenant + "/date=" + p.hour.Format("2006-01-02") + fmt.Sprintf("/hour=%02d", p.hour.Hour())
}

// object is the name of file in the partition.
func (p partition) object(file string) string { return p.dir() + "/" + file }

// parseObject splits an object name into its partition and its file (one
// segment). ok is false for a name outside the layout: not five segments,
// a hidden signal, no tenant= prefix, a date that is not YYYY-MM-DD or an
// hour that is not 00 to 23.
func parseObject(name string) (p partition, file string, ok bool) {
	seg := strings.Split(name, "/")
	if len(seg) != 5 || seg[4] == "" {
		return partition{}, "", false
	}
	p, ok = parseDir(seg[0], seg[1], seg[2], seg[3])
	return p, seg[4], ok
}

// parseDir parses the four segments of a partition's prefix.
func parseDir(signal, tenant, date, hour string) (partition, bool) {
	if signal == "" || signal[0] == '.' {
		return partition{}, false
	}
	tenant, ok1 := strings.CutPrefix(tenant, "tenant=")
	date, ok2 := strings.CutPrefix(date, "date=")
	hour, ok3 := strings.CutPrefix(hour, "hour=")
	if !ok1 || !ok2 || !ok3 || len(hour) != 2 || hour[0] < '0' || hour[0] > '9' || hour[1] < '0' || hour[1] > '9' {
		return partition{}, false
	}
	day, err := time.Parse("2006-01-02", date)
	h := int(hour[0]-'0')*10 + int(hour[1]-'0')
	if err != nil || h > 23 {
		return partition{}, false
	}
	return partition{signal: signal, tenant: tenant, hour: day.Add(time.Duration(h) * time.Hour)}, true
}

// parquetFile is the file name of a Parquet file of id.
func parquetFile(id string) string { return id + ".parquet" }

// isParquetFile reports whether a partition's file is a Parquet file of
// data: *.parquet, not hidden.
func isParquetFile(file string) bool {
	return !strings.HasPrefix(file, ".") && strings.HasSuffix(file, ".parquet")
}

// autoID is the id of a file Writer.Flush names itself: the time of the
// write and a random number, so no two writes share one.
func autoID(now time.Time, random uint64) string {
	return fmt.Sprintf("%s-%016x", now.UTC().Format("20060102T150405.000000000Z"), random)
}

// intentFile records a merge in progress in its partition.
const intentFile = ".compact"

// RangeName is the name, without .parquet, of the files the lake loader
// writes of the spool records first to last: both in 20 digits.
func RangeName(first, last uint64) string { return fmt.Sprintf("%020d-%020d", first, last) }

// PartName is the name, without .parquet, of part n of the spool records
// first to last written in parts (a record too large for one file):
// RangeName(first, last)+"-p<n>".
func PartName(first, last uint64, n int) string {
	return RangeName(first, last) + "-p" + strconv.Itoa(n)
}

// NodeName is name (a RangeName or PartName) as node's loader names its
// files: node+"."+name, so that the spool records of many nodes, each
// numbered by its own spool, never share a name in a bucket they all
// write. Node "" (a lake of one node) leaves name as it is.
func NodeName(node, name string) string {
	if node == "" {
		return name
	}
	return node + "." + name
}

// ValidNode reports whether node can name a node in file names: 1 to 63
// of [a-z0-9-], starting with a letter or digit.
func ValidNode(node string) bool {
	if node == "" || len(node) > 63 || node[0] == '-' {
		return false
	}
	for i := 0; i < len(node); i++ {
		if c := node[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// mergeName is the file name of a merge of node's records first to last:
// n 1 gives <first>-<last>-c.parquet, n > 1 <first>-<last>-c<n>.parquet
// (for when the first is taken), after the node's prefix (NodeName).
func mergeName(node string, first, last uint64, n int) string {
	if n <= 1 {
		return parquetFile(NodeName(node, RangeName(first, last)+"-c"))
	}
	return parquetFile(NodeName(node, RangeName(first, last)+"-c"+strconv.Itoa(n)))
}

// parseRange parses <first>-<last>.parquet, <first>-<last>-c[N].parquet
// (a merge) or <first>-<last>-p<N>.parquet (part N of a large record
// written in parts), first and last in 20 digits, each possibly after a
// node's prefix (parseFile says which).
func parseRange(name string) (first, last uint64, ok bool) {
	_, first, last, ok = parseFile(name)
	return first, last, ok
}

// parseFile is parseRange that also returns the node of a node's file
// ("" for none).
func parseFile(name string) (node string, first, last uint64, ok bool) {
	base, isParquet := strings.CutSuffix(name, ".parquet")
	if n, rest, found := strings.Cut(base, "."); found {
		if !ValidNode(n) {
			return "", 0, 0, false
		}
		node, base = n, rest
	}
	if !isParquet || len(base) < 41 || base[20] != '-' {
		return "", 0, 0, false
	}
	if rest := base[41:]; rest != "" && (!strings.HasPrefix(rest, "-c") && !strings.HasPrefix(rest, "-p") || strings.Trim(rest[2:], "0123456789") != "") {
		return "", 0, 0, false
	}
	first, err1 := strconv.ParseUint(base[:20], 10, 64)
	last, err2 := strconv.ParseUint(base[21:41], 10, 64)
	if err1 != nil || err2 != nil || first == 0 || last < first {
		return "", 0, 0, false
	}
	return node, first, last, true
}

func isRange(name string) bool {
	_, _, ok := parseRange(name)
	return ok
}

// A DataFile is a Parquet file of data in the lake, as a reader finds it
// by listing the bucket: its object name, the partition it is in and its
// size.
type DataFile struct {
	Name   string
	Signal string    // otlpwire.Signal.String()
	Tenant string    // as in the partition's name
	Hour   time.Time // the partition's hour, UTC
	Size   int64
	// ModTime is when the object was last uploaded (bucket.Attrs).
	ModTime time.Time
	// First and Last are the spool records a file of the lake loader
	// holds (its name says), merged files included; 0 for another
	// writer's file.
	First, Last uint64
	// Node is the loader's node whose spool numbers First and Last (""
	// for a lake of one node; NodeName).
	Node string
}

// ParseDataFile tells a Parquet file of data from any other object of the
// bucket (hidden files, compaction intents, names outside the layout).
func ParseDataFile(a bucket.Attrs) (DataFile, bool) {
	p, file, ok := parseObject(a.Name)
	if !ok || !isParquetFile(file) {
		return DataFile{}, false
	}
	node, first, last, _ := parseFile(file)
	return DataFile{Name: a.Name, Signal: p.signal, Tenant: p.tenant, Hour: p.hour, Size: a.Size, ModTime: a.ModTime, First: first, Last: last, Node: node}, true
}

// TenantPrefix is the prefix of every object of the signal's records of
// tenant, to list them with.
func TenantPrefix(sig otlpwire.Signal, tenant string) string {
	return sig.String() + "/tenant=" + tenant + "/"
}

// HourPrefix is the prefix of every object of the partition of the
// signal's records of tenant in the UTC hour that holds t, to list it
// alone with.
func HourPrefix(sig otlpwire.Signal, tenant string, t time.Time) string {
	return partition{signal: sig.String(), tenant: tenant, hour: t.UTC().Truncate(time.Hour)}.dir() + "/"
}
