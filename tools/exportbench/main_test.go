package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pmetric"
	"go.opentelemetry.io/collector/pdata/pmetric/pmetricotlp"
)

// TestMain lets the test binary serve as the receiver child.
func TestMain(m *testing.M) {
	if os.Getenv(receiverEnv) == "1" {
		if err := runReceiver(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "receiver:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if shared.rp != nil {
		shared.rp.Close()
	}
	os.Exit(code)
}

// shared is the dataset and receiver child the tests and benchmarks share.
var shared struct {
	once sync.Once
	ds   *dataset
	rp   *receiverProc
	err  error
}

// setup returns the shared dataset and receiver: the files of
// $EXPORTBENCH_INPUT_DIR if set, otherwise a small generated dataset.
func setup(tb testing.TB) (*dataset, *receiverProc) {
	tb.Helper()
	shared.once.Do(func() {
		if dir := os.Getenv("EXPORTBENCH_INPUT_DIR"); dir != "" {
			shared.ds, shared.err = loadDir(dir)
		} else {
			shared.ds, shared.err = generate(context.Background(), genOptions{Batches: 5, Points: 400, Resources: 4}, io.Discard)
		}
		if shared.err != nil {
			return
		}
		shared.rp, shared.err = startReceiver(os.Stderr)
	})
	if shared.err != nil {
		tb.Fatal(shared.err)
	}
	return shared.ds, shared.rp
}

// TestSmoke sends the dataset once in every format and checks that every
// data point arrived intact, that bytes were counted, and that compression
// makes each format smaller.
func TestSmoke(t *testing.T) {
	ds, rp := setup(t)
	if os.Getenv("EXPORTBENCH_INPUT_DIR") != "" {
		t.Log("dataset from EXPORTBENCH_INPUT_DIR")
	}
	wire := make(map[string]int64)
	for _, f := range Formats {
		r := measure(context.Background(), rp, f, ds, passOptions{Consumers: 4, Timeout: time.Minute}, 1, io.Discard)
		if r.Err != "" {
			t.Errorf("%s: %s", f.Name, r.Err)
			continue
		}
		if !r.Intact {
			t.Errorf("%s: data arrived changed: %s differ", f.Name, r.Lost)
		}
		if r.Points != ds.points || r.Passes != 1 {
			t.Errorf("%s: %d points in %d passes, want %d in 1", f.Name, r.Points, r.Passes, ds.points)
		}
		if r.WireBytes <= 0 || r.ColdBytes <= 0 || r.ResponseBytes <= 0 || r.SteadyBytesPerBatch <= 0 {
			t.Errorf("%s: wire %d, cold %d, response %d, steady %.0f bytes: want all positive",
				f.Name, r.WireBytes, r.ColdBytes, r.ResponseBytes, r.SteadyBytesPerBatch)
		}
		if r.NsPerPoint <= 0 {
			t.Errorf("%s: %v ns/point", f.Name, r.NsPerPoint)
		}
		wire[f.Name] = r.WireBytes
		t.Logf("%-22s %9d wire bytes (%5.2f×), cold %d, steady %.0f/batch", f.Name, r.WireBytes, r.Ratio, r.ColdBytes, r.SteadyBytesPerBatch)
	}
	for _, base := range []string{"otlp-grpc", "otlp-http-proto", "otlp-http-json", "stef", "relay-http"} {
		for _, c := range []string{"+zstd", "+gzip"} {
			n, ok := wire[base+c]
			if !ok {
				continue
			}
			if n >= wire[base] {
				t.Errorf("%s%s: %d bytes, not fewer than %s's %d", base, c, n, base, wire[base])
			}
		}
	}
	// Uncompressed OTLP protobuf carries the request plus framing.
	if wire["otlp-grpc"] < ds.raw || wire["relay-http"] < ds.raw {
		t.Errorf("otlp-grpc %d and relay-http %d bytes: fewer than the %d bytes of protobuf they carry", wire["otlp-grpc"], wire["relay-http"], ds.raw)
	}
}

// TestDigestSensitive: changing any part of one data point changes the
// digest part that covers it, and reordering points or attributes does
// not.
func TestDigestSensitive(t *testing.T) {
	ds, _ := setup(t)
	md := ds.batches[0].md
	var h digester
	want := h.Metrics(md)
	if want.Points != ds.batches[0].points || want.Points == 0 {
		t.Fatalf("digest counts %d points, pdata %d", want.Points, ds.batches[0].points)
	}
	// A copy with the first gauge point's parts changed one at a time.
	first := func(m pmetric.Metrics) (pmetric.Metric, pmetric.NumberDataPoint) {
		rms := m.ResourceMetrics()
		for i := range rms.Len() {
			sms := rms.At(i).ScopeMetrics()
			for j := range sms.Len() {
				ms := sms.At(j).Metrics()
				for k := range ms.Len() {
					if m := ms.At(k); m.Type() == pmetric.MetricTypeGauge && m.Gauge().DataPoints().Len() > 1 {
						return m, m.Gauge().DataPoints().At(0)
					}
				}
			}
		}
		t.Fatal("no gauge with two points in the dataset")
		return pmetric.Metric{}, pmetric.NumberDataPoint{}
	}
	for _, c := range []struct {
		part   string
		change func(pmetric.Metric, pmetric.NumberDataPoint)
	}{
		{"values", func(_ pmetric.Metric, p pmetric.NumberDataPoint) { p.SetDoubleValue(p.DoubleValue() + 1) }},
		{"timestamps", func(_ pmetric.Metric, p pmetric.NumberDataPoint) { p.SetTimestamp(p.Timestamp() + 1) }},
		{"series", func(_ pmetric.Metric, p pmetric.NumberDataPoint) { p.Attributes().PutStr("extra", "x") }},
		{"series", func(m pmetric.Metric, _ pmetric.NumberDataPoint) { m.SetUnit(m.Unit() + "x") }},
		{"exemplars", func(_ pmetric.Metric, p pmetric.NumberDataPoint) { p.Exemplars().AppendEmpty().SetIntValue(3) }},
	} {
		cp := pmetric.NewMetrics()
		md.CopyTo(cp)
		c.change(first(cp))
		if diff := want.Diff(h.Metrics(cp)); !strings.Contains(diff, c.part) {
			t.Errorf("changing %s: diff %q", c.part, diff)
		}
	}
	// Reordering points and attributes changes nothing.
	cp := pmetric.NewMetrics()
	md.CopyTo(cp)
	m, _ := first(cp)
	dps := m.Gauge().DataPoints()
	a, b := pmetric.NewNumberDataPoint(), pmetric.NewNumberDataPoint()
	dps.At(0).CopyTo(a)
	dps.At(1).CopyTo(b)
	b.CopyTo(dps.At(0))
	a.CopyTo(dps.At(1))
	attrs := dps.At(0).Attributes()
	reversed := pcommon.NewMap()
	keys := make([]string, 0, attrs.Len())
	for k := range attrs.All() {
		keys = append(keys, k)
	}
	for i := len(keys) - 1; i >= 0; i-- {
		v, _ := attrs.Get(keys[i])
		v.CopyTo(reversed.PutEmpty(keys[i]))
	}
	reversed.CopyTo(attrs)
	if diff := want.Diff(h.Metrics(cp)); diff != "" {
		t.Errorf("reordering points and attributes: diff %q", diff)
	}
}

// TestProxyCounts: the proxy relays both directions intact and counts
// exactly the bytes relayed.
func TestProxyCounts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b, _ := io.ReadAll(c)
				c.Write(append(b, b...)) // answers twice what it got
			}()
		}
	}()
	p, err := newProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	msg := bytes.Repeat([]byte("0123456789"), 100_000)
	for range 3 {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			c.Write(msg)
			c.(*net.TCPConn).CloseWrite()
		}()
		got, err := io.ReadAll(c)
		c.Close()
		if err != nil || !bytes.Equal(got, append(append([]byte{}, msg...), msg...)) {
			t.Fatalf("relayed %d bytes back (%v), want %d", len(got), err, 2*len(msg))
		}
	}
	if up, down, conns := p.up.Load(), p.down.Load(), p.conns.Load(); up != 3*int64(len(msg)) || down != 6*int64(len(msg)) || conns != 3 {
		t.Errorf("counted up %d, down %d, %d connections; want %d, %d, 3", up, down, conns, 3*len(msg), 6*len(msg))
	}
}

// TestRunOutputs runs the command on an input directory with two formats
// and checks the markdown, CSV and JSON outputs agree.
func TestRunOutputs(t *testing.T) {
	ds, _ := setup(t)
	dir := t.TempDir()
	for i, b := range ds.batches[:3] {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("b%02d.pb", i)), b.raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var raw int64
	for _, b := range ds.batches[:3] {
		raw += int64(len(b.raw))
	}
	args := []string{"--input-dir", dir, "--formats", "otlp-http-proto,relay-http+zstd", "--iterations", "2", "--consumers", "2", "--timeout", "1m"}

	var md, js, cs bytes.Buffer
	for _, o := range []struct {
		flag string
		out  *bytes.Buffer
	}{{"", &md}, {"--json", &js}, {"--csv", &cs}} {
		a := args
		if o.flag != "" {
			a = append(append([]string{}, args...), o.flag)
		}
		if err := run(context.Background(), a, o.out, io.Discard); err != nil {
			t.Fatalf("run %v: %v", a, err)
		}
	}
	var rep report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.RawBytes != raw || rep.Batches != 3 || len(rep.Results) != 2 {
		t.Fatalf("JSON report: %d raw bytes, %d batches, %d results; want %d, 3, 2", rep.RawBytes, rep.Batches, len(rep.Results), raw)
	}
	for _, r := range rep.Results {
		if !r.Intact || r.Passes != 2 || r.WireBytes <= 0 {
			t.Errorf("%s: intact %v, %d passes, %d wire bytes", r.Format, r.Intact, r.Passes, r.WireBytes)
		}
	}
	rows, err := csv.NewReader(&cs).ReadAll()
	if err != nil || len(rows) != 3 || rows[1][0] != "otlp-http-proto" || rows[2][0] != "relay-http+zstd" {
		t.Fatalf("CSV: %v, %q", err, rows)
	}
	for _, name := range []string{"| otlp-http-proto |", "| relay-http+zstd |", "ratio vs raw"} {
		if !strings.Contains(md.String(), name) {
			t.Errorf("markdown lacks %q:\n%s", name, md.String())
		}
	}
}

// TestFlags: bad flags are refused with the flag's name.
func TestFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--formats", "carrier-pigeon"}, "--formats"},
		{[]string{"--iterations", "0"}, "--iterations"},
		{[]string{"--consumers", "0"}, "--consumers"},
		{[]string{"--csv", "--json"}, "pick one"},
		{[]string{"--gen-batches", "1"}, "--gen-batches"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		_, err := parseFlags(c.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one naming %q", c.args, err, c.want)
		}
	}
	if _, err := loadDir(t.TempDir()); err == nil {
		t.Error("an empty input dir was accepted")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "x.pb"), []byte{0xff, 0xff}, 0o644)
	if _, err := loadDir(dir); err == nil || !strings.Contains(err.Error(), "x.pb") {
		t.Errorf("a corrupt file: error %v, want one naming x.pb", err)
	}
}

// TestEmptyNumberPoint: number data points without a value reach the
// receiver intact over OTLP, and over STEF when they carry the
// no-recorded-value flag (a staleness marker); STEF's encoder panics on
// unflagged ones, so then the STEF formats are reported as not run instead
// of taking the process down.
func TestEmptyNumberPoint(t *testing.T) {
	_, rp := setup(t)
	for _, flagged := range []bool{true, false} {
		var batches []*batch
		for i := range 2 {
			md := pmetric.NewMetrics()
			m := md.ResourceMetrics().AppendEmpty().ScopeMetrics().AppendEmpty().Metrics().AppendEmpty()
			m.SetName("up")
			dps := m.SetEmptyGauge().DataPoints()
			empty := dps.AppendEmpty()
			empty.SetTimestamp(pcommon.Timestamp(1e18 + i))
			if flagged {
				empty.SetFlags(pmetric.DefaultDataPointFlags.WithNoRecordedValue(true))
			}
			dps.AppendEmpty().SetDoubleValue(1)
			raw, err := pmetricotlp.NewExportRequestFromMetrics(md).MarshalProto()
			if err != nil {
				t.Fatal(err)
			}
			batches = append(batches, &batch{raw: raw, md: md, points: 2})
		}
		ds := newDataset("empty", batches)
		if want := map[bool]int64{true: 0, false: 2}[flagged]; ds.emptyNumbers != want {
			t.Fatalf("flagged %v: counted %d unflagged empty number points, want %d", flagged, ds.emptyNumbers, want)
		}
		for _, f := range Formats {
			r := measure(context.Background(), rp, f, ds, passOptions{Consumers: 2, Timeout: 30 * time.Second}, 1, io.Discard)
			if f.transport == stef && !flagged {
				if !strings.Contains(r.Err, "splunk/stef#370") {
					t.Errorf("%s, unflagged: error %q, want the stef#370 refusal", f.Name, r.Err)
				}
				continue
			}
			if r.Err != "" || !r.Intact {
				t.Errorf("%s, flagged %v: error %q, lost %q", f.Name, flagged, r.Err, r.Lost)
			}
		}
	}
}

// TestSendErrorsSurface: an export that fails behind the queue is reported
// by the sender's Err, which a pass adds to its timeout, for Collector
// exporters and for the relay.
func TestSendErrorsSurface(t *testing.T) {
	ds, _ := setup(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := ln.Addr().String()
	ln.Close() // nothing listens here now
	ep := endpoints{OTLPGRPC: dead, OTLPHTTP: dead, STEF: dead}
	for _, name := range []string{"otlp-http-proto", "relay-http"} {
		fs, err := parseFormats(name)
		if err != nil {
			t.Fatal(err)
		}
		s, err := newSender(context.Background(), fs[0], ep, 1, 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Send(context.Background(), ds.batches[0]); err != nil {
			t.Fatal(err)
		}
		var got error
		for deadline := time.Now().Add(20 * time.Second); got == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			got = s.Err()
		}
		s.Shutdown(context.Background())
		if got == nil || !strings.Contains(withSendErr(errors.New("timed out"), s).Error(), "timed out (") {
			t.Errorf("%s: export to a closed port: Err %v", name, got)
		}
	}
}
