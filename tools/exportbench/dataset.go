package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// batch is one ExportMetricsServiceRequest of a dataset.
type batch struct {
	raw    []byte          // the request's protobuf bytes, as read
	md     pmetric.Metrics // raw, unmarshalled by pdata before any timing
	points int64
}

// dataset is the batches one pass exports, in order.
type dataset struct {
	name    string
	batches []*batch
	points  int64
	raw     int64  // bytes of protobuf, all batches
	digest  Digest // of every point, the expected sink digest
	// emptyNumbers counts number data points without a value and without
	// the no-recorded-value flag, on which stef v0.0.9 panics
	// (splunk/stef#370) inside the exporter's queue, where no caller can
	// recover. Flagged ones it encodes as having no value.
	emptyNumbers int64
}

// newDataset summarizes batches.
func newDataset(name string, batches []*batch) *dataset {
	ds := &dataset{name: name, batches: batches}
	var h digester
	for _, b := range batches {
		ds.points += b.points
		ds.raw += int64(len(b.raw))
		ds.digest.Add(h.Metrics(b.md))
		ds.emptyNumbers += emptyNumbers(b.md)
	}
	return ds
}

// emptyNumbers counts the number data points of md without a value and
// without the no-recorded-value flag.
func emptyNumbers(md pmetric.Metrics) int64 {
	var n int64
	count := func(dps pmetric.NumberDataPointSlice) {
		for i := range dps.Len() {
			if p := dps.At(i); p.ValueType() == pmetric.NumberDataPointValueTypeEmpty && !p.Flags().NoRecordedValue() {
				n++
			}
		}
	}
	rms := md.ResourceMetrics()
	for i := range rms.Len() {
		sms := rms.At(i).ScopeMetrics()
		for j := range sms.Len() {
			ms := sms.At(j).Metrics()
			for k := range ms.Len() {
				switch m := ms.At(k); m.Type() {
				case pmetric.MetricTypeGauge:
					count(m.Gauge().DataPoints())
				case pmetric.MetricTypeSum:
					count(m.Sum().DataPoints())
				}
			}
		}
	}
	return n
}

// loadDir reads every *.pb and *.binpb file of dir, in name order, each an
// ExportMetricsServiceRequest.
func loadDir(dir string) (*dataset, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read input dir: %w", err)
	}
	var names []string
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && (strings.HasSuffix(n, ".pb") || strings.HasSuffix(n, ".binpb")) {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("read input dir: no .pb or .binpb files in %s", dir)
	}
	sort.Strings(names)
	var batches []*batch
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			return nil, fmt.Errorf("read input dir: %w", err)
		}
		req := pmetricotlp.NewExportRequest()
		if err := req.UnmarshalProto(raw); err != nil {
			return nil, fmt.Errorf("read %s: not an ExportMetricsServiceRequest: %w", n, err)
		}
		md := req.Metrics()
		b := &batch{raw: raw, md: md, points: int64(md.DataPointCount())}
		if b.points == 0 {
			continue // nothing would arrive to stop the clock
		}
		batches = append(batches, b)
	}
	if len(batches) == 0 {
		return nil, fmt.Errorf("read input dir: no data points in %s", dir)
	}
	return newDataset(dir, batches), nil
}

// genOptions shape the built-in dataset.
type genOptions struct {
	Batches   int
	Points    int  // data points per batch
	Resources int  // scrape targets per batch
	Churn     bool // every batch new series, not the same ones later
	// Values is "noisy" (the default: scrape times jitter, counters grow
	// by uneven steps, gauges jump, as real ones do) or "smooth" (counters
	// exactly linear, scrapes exactly a second apart, gauges a sine: the
	// best case for delta coding and zstd). Not used with Churn.
	Values    string
	Wirehouse string
}

// generate writes the built-in dataset with `wirehouse gen --signal
// metrics --repeat` into a temporary directory and loads it: a Kubernetes
// cluster's scrape targets, 40 labels per series, every kind of metric;
// batch i is the same targets i seconds later, so counters and histograms
// grow and gauges drift from batch to batch, as a Collector's exports do,
// with the noise real values have unless o.Values is "smooth".
// With o.Churn every batch holds other series instead (no --repeat): the
// worst case for an encoding that remembers what its stream has sent.
//
// wirehouse is o.Wirehouse if set, otherwise `go run ./cmd/wirehouse` in
// the wirehouse repository holding the working directory.
func generate(ctx context.Context, o genOptions, stderr io.Writer) (*dataset, error) {
	dir, err := os.MkdirTemp("", "exportbench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	args := []string{"gen", "--signal", "metrics", "--out", dir,
		"--requests", strconv.Itoa(o.Batches), "--per-request", strconv.Itoa(o.Points),
		"--resources", strconv.Itoa(o.Resources)}
	if !o.Churn {
		args = append(args, "--repeat")
		if o.Values != "smooth" {
			args = append(args, "--noise")
		}
	}
	var cmd *exec.Cmd
	if o.Wirehouse != "" {
		cmd = exec.CommandContext(ctx, o.Wirehouse, args...)
	} else {
		root, err := repoRoot()
		if err != nil {
			return nil, err
		}
		cmd = exec.CommandContext(ctx, "go", append([]string{"run", "./cmd/wirehouse"}, args...)...)
		cmd.Dir = root
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	fmt.Fprintf(stderr, "exportbench: generating %d batches of %d points: %s\n", o.Batches, o.Points, strings.Join(cmd.Args, " "))
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("generate dataset: %w: %s", err, strings.TrimSpace(out.String()))
	}
	ds, err := loadDir(dir)
	if err != nil {
		return nil, err
	}
	ds.name = "generated: wirehouse " + strings.Replace(strings.Join(args, " "), "--out "+dir+" ", "", 1)
	return ds, nil
}

// repoRoot returns the wirehouse repository holding the working directory:
// the nearest directory upwards whose go.mod declares the wirehouse module.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			root := sc.Scan() && strings.TrimSpace(sc.Text()) == "module github.com/wirehouse/wirehouse"
			f.Close()
			if root {
				return dir, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("generate dataset: not inside the wirehouse repository; pass --wirehouse (a built wirehouse binary) or --input-dir")
		}
		dir = parent
	}
}
