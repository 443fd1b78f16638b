package main

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/lake"
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// tracebenchSamples is what a lake build keeps for the queries: when the
// lake ends, and spans drawn from it.
type tracebenchSamples struct {
	Spans  int            `json:"spans"`
	End    time.Time      `json:"end"`
	Traces []string       `json:"traces"` // hex trace ids
	Search []searchSample `json:"search"` // spans of the last hour

	files         int
	bytes         int64
	duckdbVersion string
}

// searchSample is a span to search for: its service, name, one of its
// string attributes and a minimum duration it passes.
type searchSample struct {
	Service, Operation string
	Key, Value         string
	Duration           time.Duration
}

// loadOrBuildLake reads DIR/tracebench.json, or builds the lake and
// writes it.
func loadOrBuildLake(ctx context.Context, f *tracebenchFlags, stderr io.Writer) (*tracebenchSamples, error) {
	meta := filepath.Join(f.dir, "tracebench.json")
	s := &tracebenchSamples{}
	if b, err := os.ReadFile(meta); err == nil {
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("read %s: %w", meta, err)
		}
		fmt.Fprintf(stderr, "tracebench: the lake of %s (%d spans, ending %s)\n", f.dir, s.Spans, s.End.Format(time.RFC3339))
	} else {
		if err := buildLake(ctx, f, s, stderr); err != nil {
			return nil, err
		}
		b, _ := json.Marshal(s)
		if err := os.WriteFile(meta, b, 0o644); err != nil {
			return nil, err
		}
	}
	err := filepath.WalkDir(filepath.Join(f.dir, "traces"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.HasPrefix(d.Name(), ".") {
			if fi, err := d.Info(); err == nil {
				s.files++
				s.bytes += fi.Size()
			}
		}
		return err
	})
	return s, err
}

// buildLake writes f.spans spans of synth traces, 1000 a request (4
// resources × 2 scopes; 16 services; traces of 1 to 8 spans), one request
// a second of span time ending now, through one lake writer, then merges
// each hour's files as the loader's compaction does.
func buildLake(ctx context.Context, f *tracebenchFlags, s *tracebenchSamples, stderr io.Writer) error {
	const perRequest = 1000
	requests := (f.spans + perRequest - 1) / perRequest
	s.End = time.Now().UTC().Truncate(time.Second)
	start := s.End.Add(-time.Duration(requests) * time.Second)
	wcfg := lake.DefaultWriterConfig()
	wcfg.Dir = f.dir
	w, err := lake.NewWriter(wcfg)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "tracebench: building a lake of %d spans in %s\n", requests*perRequest, f.dir)
	rng := rand.New(rand.NewPCG(uint64(f.seed), 7))
	began := time.Now()
	for i := range requests {
		if err := ctx.Err(); err != nil {
			w.Close()
			return err
		}
		body := synth.Traces(synth.Config{Seed: int64(i), Resources: 4, ScopesPerResource: 2, TotalRecords: perRequest, Start: start})
		if _, err := w.Append(otlpwire.SignalTraces, "default", body); err != nil {
			w.Close()
			return err
		}
		s.sample(body, rng, start.Add(time.Duration(i)*time.Second), s.End)
		if i%1000 == 999 {
			fmt.Fprintf(stderr, "tracebench: %d spans, %.0f spans/s\n", (i+1)*perRequest, float64((i+1)*perRequest)/time.Since(began).Seconds())
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	s.Spans = requests * perRequest
	fmt.Fprintf(stderr, "tracebench: written in %s; compacting\n", time.Since(began).Round(time.Second))
	c, err := lake.Compact(ctx, f.dir, 0, time.Now().Add(2*time.Hour), lake.CompactOptions{})
	if err != nil {
		return fmt.Errorf("compact: %w", err)
	}
	fmt.Fprintf(stderr, "tracebench: compacted %+v\n", c)
	return nil
}

// sample keeps one trace id of each request, and from requests of the
// last hour a span to search for: its service, name, one of its string
// attributes and a minimum duration it passes.
func (s *tracebenchSamples) sample(body []byte, rng *rand.Rand, at, end time.Time) {
	wantSearch := at.After(end.Add(-time.Hour)) && rng.IntN(4) == 0
	var svc []byte
	// The walk stops at the span sampled (errSampled) or at a malformed
	// container: either way the request has given what it can.
	_ = otlpwire.TracesRequest(body).Walk(otlpwire.SpanVisitor{
		ResourceSpans: func(rs otlpwire.ResourceSpans) error {
			res, _ := rs.Resource()
			svc, _ = res.ServiceName()
			return nil
		},
		Span: func(sp otlpwire.Span) error {
			if rng.IntN(100) != 0 {
				return nil
			}
			var fl otlpwire.SpanFields
			if sp.Read(&fl) != nil {
				return nil
			}
			s.Traces = append(s.Traces, hex.EncodeToString(fl.TraceID))
			if !wantSearch {
				return errSampled
			}
			var strs [][2]string
			seen := map[string]int{}
			for kv, err := range fl.Attributes.All() {
				if err == nil {
					seen[string(kv.Key)]++
					if kv.Value.Type() == otlpwire.ValueString {
						strs = append(strs, [2]string{string(kv.Key), string(kv.Value.Str())})
					}
				}
			}
			// A key sent twice keeps one value in the lake: not a
			// fair question.
			strs = slices.DeleteFunc(strs, func(kv [2]string) bool { return seen[kv[0]] > 1 })
			if len(strs) == 0 {
				return errSampled
			}
			kv := strs[rng.IntN(len(strs))]
			d := time.Duration(fl.EndTime-fl.StartTime) / 2
			s.Search = append(s.Search, searchSample{Service: string(svc), Operation: string(fl.Name), Key: kv[0], Value: kv[1], Duration: d.Truncate(time.Microsecond)})
			return errSampled
		},
	})
}

// errSampled ends sample's walk of a request at the span it sampled.
var errSampled = errors.New("tracebench: sampled")

// s3Lake returns the bucket of --s3-endpoint, with --dir's lake uploaded
// into it if it holds no traces yet.
func s3Lake(ctx context.Context, f *tracebenchFlags, stderr io.Writer) (*bucket.S3, error) {
	b, err := bucket.NewS3(ctx, bucket.S3Config{Bucket: f.s3Bucket, Endpoint: f.s3Endpoint, PathStyle: true})
	if err != nil {
		return nil, err
	}
	for _, err := range b.List(ctx, "traces/") {
		if err != nil {
			return nil, err
		}
		return b, nil // it has a lake already
	}
	local := bucket.NewLocal(f.dir)
	n := 0
	for a, err := range local.List(ctx, "traces/") {
		if err != nil {
			return nil, err
		}
		rc, err := local.Get(ctx, a.Name)
		if err != nil {
			return nil, err
		}
		err = b.Upload(ctx, a.Name, rc)
		rc.Close()
		if err != nil {
			return nil, err
		}
		n++
	}
	fmt.Fprintf(stderr, "tracebench: uploaded %d files of %s to %s/%s\n", n, f.dir, f.s3Endpoint, f.s3Bucket)
	return b, nil
}
