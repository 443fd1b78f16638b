package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
	"github.com/wirehouse/wirehouse/internal/synth"
)

// readmeSparkBlock returns README.md's python block under "## Query the
// lake with Spark or Trino".
func readmeSparkBlock(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Query the lake with Spark or Trino\n")
	if !ok {
		t.Fatal(`README.md has no "## Query the lake with Spark or Trino" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```python\n")
	if !ok {
		t.Fatal("README.md's Spark section has no python block")
	}
	block, _, _ = strings.Cut(block, "\n```\n")
	return block + "\n"
}

// sparkReport is what testdata/spark_lake.py reports of one signal of
// one lake.
type sparkReport struct {
	Spark, DuckDB struct {
		Rows, Files int
		LeftOut     int `json:"left_out"`
		GlobRows    int `json:"glob_rows"`
		Types       map[string]string
	}
	Compared struct {
		Columns      string
		Rows, Differ int
		First        []string
	}
}

// TestServeSparkLake: Apache Spark (pyspark 3.5 in local mode, on Java
// 17) reads lakes that serve wrote, one on local disk and one in
// SeaweedFS through s3a (hadoop-aws and the AWS SDK bundle), with
// README.md's Spark block as written, and reads what DuckDB reads: as
// many rows as were sent, every column of the same type (in one
// vocabulary, nested columns leaf by leaf; the times, TIMESTAMP(NANOS),
// are the one documented difference: bigint nanoseconds in Spark) and the
// same values row for row (times, services, bodies and span names, ids,
// attribute maps, events, partitions). The old hour of each lake was
// compacted on a restart, so the bucket is caught mid-merge: its inputs
// beside its output for their grace period, which both readers leave out
// by the rule docs/ARCHITECTURE.md states (a plain glob counts them
// twice). DuckDB reads a copy of the bucket's objects: its S3 extension
// is downloaded at run time, from a host this machine does not reach.
func TestServeSparkLake(t *testing.T) {
	python := peerFromEnv(t, "WIREHOUSE_PYTHON", "installs pyspark and DuckDB in a venv")
	jars := peerFromEnv(t, "WIREHOUSE_SPARK_JARS", "downloads hadoop-aws and the AWS SDK bundle for Spark's s3a")
	java := peerFromEnv(t, "WIREHOUSE_JAVA", "installs Debian's Java 17")
	began := time.Now()
	srv := s3test.Start(t)
	srv.Env(t)
	bkt := srv.CreateBucket("spark")
	localData, s3Data := t.TempDir(), t.TempDir()
	flags := []string{"--lake-max-delay", "200ms"}
	s3Flags := append(slices.Clone(flags), "--lake-url", "s3://"+bkt+"/wh", "--lake-s3-endpoint", srv.Endpoint,
		"--lake-s3-path-style", "--lake-node", "node-a")
	startBoth := func() []*serveProc {
		procs := []*serveProc{startServeProc(t, localData, flags...), startServeProc(t, s3Data, s3Flags...)}
		for _, p := range procs {
			t.Cleanup(func() { // after a failure; stopped ones are waited for already
				if p.cmd.ProcessState == nil {
					p.cmd.Process.Kill()
					p.cmd.Wait()
				}
			})
		}
		return procs
	}

	// Five requests of each signal in an hour that ended over an hour
	// ago, each in a file of its own (the lakes catch up before the
	// next), then one of now: the same to both nodes.
	procs := startBoth()
	old := time.Now().UTC().Add(-2 * time.Hour).Truncate(time.Hour).Add(10 * time.Minute)
	const requests, perRequest = 6, 40
	for i := range requests {
		start := old.Add(time.Duration(i) * time.Minute)
		if i == requests-1 {
			start = time.Now().Add(-time.Minute)
		}
		cfg := synth.Config{Seed: int64(i), Resources: 2, ScopesPerResource: 2, TotalRecords: perRequest, Start: start}
		logs, traces := synth.Logs(cfg), synth.Traces(cfg)
		for _, p := range procs {
			postOTLP(t, p, "/v1/logs", logs)
			postOTLP(t, p, "/v1/traces", traces)
		}
		for _, p := range procs {
			pollUntil(t, 30*time.Second, "lake caught up", func() bool { return lakeCaughtUp(p) })
		}
	}
	// A restart compacts the old hour at once (its first pass): on disk
	// the inputs go with the swap, in the bucket they stay two minutes.
	for _, p := range procs {
		p.stop(t)
	}
	procs = startBoth()
	for _, p := range procs {
		pollUntil(t, 90*time.Second, "old hour compacted", func() bool {
			return scrapeValue(t, p.addrs["admin HTTP"], "wirehouse_lake_compaction_files_written_total") >= 2
		})
		p.stop(t)
	}
	t.Logf("serve wrote and compacted both lakes in %v", time.Since(began).Round(time.Second))

	// DuckDB's copy of the bucket, intents included.
	mirror := t.TempDir()
	b := srv.Bucket(bkt, "wh")
	intents := 0
	for a, err := range b.List(context.Background(), "") {
		if err != nil {
			t.Fatal(err)
		}
		r, err := b.Get(context.Background(), a.Name)
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(mirror, filepath.FromSlash(a.Name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if filepath.Base(p) == ".compact" {
			intents++
		}
	}
	if intents < 2 {
		t.Fatalf("the bucket holds %d compaction intents, want one in the old hour of each signal", intents)
	}

	// README's block, as written but for the endpoint, keys, jars (which
	// must be the Makefile's) and bucket.
	block := readmeSparkBlock(t)
	readmeJars := regexpFind(t, block, `"spark.jars", "([^"]+)"`)
	var want []string
	for _, j := range strings.Split(readmeJars, ",") {
		abs, err := filepath.Abs(filepath.Join("..", "..", j))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, abs)
	}
	if strings.Join(want, ",") != jars {
		t.Fatalf("README.md's Spark block names the jars %s; the Makefile's (WIREHOUSE_SPARK_JARS) are %s", readmeJars, jars)
	}
	for _, r := range [][2]string{
		{`"spark.jars", "` + readmeJars + `"`, `"spark.jars", "` + jars + `"`},
		{`"http://127.0.0.1:8333"`, `"` + srv.Endpoint + `"`},
		{`"spark.hadoop.fs.s3a.access.key", "any"`, `"spark.hadoop.fs.s3a.access.key", "` + s3test.AccessKey + `"`},
		{`"spark.hadoop.fs.s3a.secret.key", "any"`, `"spark.hadoop.fs.s3a.secret.key", "` + s3test.SecretKey + `"`},
		{`"s3a://telemetry/wirehouse"`, `"s3a://` + bkt + `/wh"`},
	} {
		if !strings.Contains(block, r[0]) {
			t.Fatalf("README.md's Spark block has no %s\n%s", r[0], block)
		}
		block = strings.ReplaceAll(block, r[0], r[1])
	}

	// Spark and DuckDB read both lakes, in one JVM (~10 s to start).
	work := t.TempDir() // Spark's scratch files, and where it may put spark-warehouse
	blockPath, outPath := filepath.Join(work, "readme_spark.py"), filepath.Join(work, "out.json")
	if err := os.WriteFile(blockPath, []byte(block), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "spark_lake.py"))
	if err != nil {
		t.Fatal(err)
	}
	localLake, s3Lake := filepath.Join(localData, "lake"), "s3a://"+bkt+"/wh"
	javaBin, err := filepath.EvalSymlinks(java)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, script, blockPath, outPath, localLake+"="+localLake, s3Lake+"="+mirror)
	cmd.Dir = work
	cmd.Env = append(os.Environ(),
		"JAVA_HOME="+filepath.Dir(filepath.Dir(javaBin)),
		"SPARK_LOCAL_DIRS="+work,
		// A small JVM on loopback, quick to warm up (C1 only: a third
		// less wall time on a busy 2-core machine); no web UI, no
		// progress bars.
		"SPARK_LOCAL_IP=127.0.0.1",
		`PYSPARK_SUBMIT_ARGS=--driver-memory 512m --driver-java-options "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" `+
			`--conf spark.ui.enabled=false --conf spark.ui.showConsoleProgress=false pyspark-shell`)
	sparkStart := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("spark_lake.py: %v\n%s", err, lastBytes(out, 20000))
	}
	t.Logf("Spark and DuckDB read both lakes in %v; README's block printed:\n%s", time.Since(sparkStart).Round(100*time.Millisecond), out)
	raw, err := os.ReadFile(outPath)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]map[string]sparkReport
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("spark_lake.py's report: %v\n%s", err, raw)
	}

	// The columns of TIMESTAMP(NANOS): bigint nanoseconds in Spark 3.5
	// (spark.sql.legacy.parquet.nanosAsLong, as README.md says).
	nanos := map[string][]string{
		"logs":   {"observed_timestamp", "timestamp"},
		"traces": {"end_time", "events.element.time", "start_time"},
	}
	for _, lake := range []struct{ name, root string }{{"local disk", localLake}, {"SeaweedFS over s3a", s3Lake}} {
		for _, sig := range []string{"logs", "traces"} {
			r, ok := got[lake.root][sig]
			if !ok {
				t.Fatalf("no report of %s on %s", sig, lake.name)
			}
			t.Logf("%s, %s: Spark %d rows in %d files (%d left out), DuckDB %d rows in %d files (%d left out; %d by a plain glob); %d rows compared: %d differ; %d column paths",
				lake.name, sig, r.Spark.Rows, r.Spark.Files, r.Spark.LeftOut, r.DuckDB.Rows, r.DuckDB.Files, r.DuckDB.LeftOut,
				r.DuckDB.GlobRows, r.Compared.Rows, r.Compared.Differ, len(r.Spark.Types))
			if want := requests * perRequest; r.Spark.Rows != want || r.DuckDB.Rows != want || r.Compared.Rows != want {
				t.Errorf("%s, %s: Spark counts %d rows, DuckDB %d (compared %d); %d were sent", lake.name, sig, r.Spark.Rows, r.DuckDB.Rows, r.Compared.Rows, want)
			}
			if r.Compared.Differ != 0 {
				t.Errorf("%s, %s: %d rows of (%s) differ; the first (Spark, DuckDB): %q", lake.name, sig, r.Compared.Differ, r.Compared.Columns, r.Compared.First)
			}
			if r.Spark.Files != r.DuckDB.Files || r.Spark.LeftOut != r.DuckDB.LeftOut {
				t.Errorf("%s, %s: Spark reads %d files and leaves out %d, DuckDB %d and %d", lake.name, sig, r.Spark.Files, r.Spark.LeftOut, r.DuckDB.Files, r.DuckDB.LeftOut)
			}
			// The old hour's merge: on disk done (inputs gone, no intent
			// left), in the bucket within its grace (inputs listed, left
			// out, and counted again by a glob).
			if lake.root == s3Lake {
				if r.Spark.LeftOut < 4 || r.DuckDB.GlobRows <= r.DuckDB.Rows {
					t.Errorf("%s, %s: %d files left out; DuckDB counts %d rows, %d by a plain glob: want the merge's inputs in the bucket, and left out", lake.name, sig, r.Spark.LeftOut, r.DuckDB.Rows, r.DuckDB.GlobRows)
				}
			} else if r.Spark.LeftOut != 0 || r.DuckDB.GlobRows != r.DuckDB.Rows || r.Spark.Files >= requests {
				t.Errorf("%s, %s: %d files (%d left out), a glob counts %d rows: want the old hour's files merged into one and its inputs gone", lake.name, sig, r.Spark.Files, r.Spark.LeftOut, r.DuckDB.GlobRows)
			}
			var asLong []string
			pairs := map[string]int{} // "Spark type / DuckDB type": column paths
			for _, path := range slices.Sorted(maps.Keys(mergeKeys(r.Spark.Types, r.DuckDB.Types))) {
				s, d := r.Spark.Types[path], r.DuckDB.Types[path]
				pairs[s+" / "+d]++
				switch {
				case s == "int64" && d == "timestamp_ns":
					asLong = append(asLong, path)
				case s != d:
					t.Errorf("%s, %s: column %s is %q in Spark, %q in DuckDB", lake.name, sig, path, s, d)
				}
			}
			if !slices.Equal(asLong, nanos[sig]) {
				t.Errorf("%s, %s: Spark reads %v as bigint where DuckDB has TIMESTAMP_NS; want %v", lake.name, sig, asLong, nanos[sig])
			}
			t.Logf("%s, %s: column paths by type (Spark / DuckDB): %v", lake.name, sig, pairs)
		}
	}
	if t.Failed() {
		for _, sig := range []string{"logs", "traces"} {
			t.Logf("%s types, Spark: %v\nDuckDB: %v", sig, got[s3Lake][sig].Spark.Types, got[s3Lake][sig].DuckDB.Types)
		}
	}
	t.Logf("whole test: %v", time.Since(began).Round(time.Second))
}

// postOTLP posts a protobuf OTLP request to path of p's OTLP/HTTP
// endpoint and fails the test unless it is acknowledged.
func postOTLP(t *testing.T, p *serveProc, path string, body []byte) {
	t.Helper()
	resp, err := http.Post("http://"+p.addrs["OTLP/HTTP"]+path, "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s", path, resp.Status)
	}
}

// mergeKeys returns the union of the keys of a and b.
func mergeKeys(a, b map[string]string) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// regexpFind returns the first submatch of expr in s, failing the test
// without one.
func regexpFind(t *testing.T, s, expr string) string {
	t.Helper()
	m := regexp.MustCompile(expr).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("README.md's Spark block has no match of %s", expr)
	}
	return m[1]
}
