package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		kind  pipeline.Kind
		retry bool
		grpc  codes.Code
		http  int
	}{
		{"invalid", fmt.Errorf("delta sums: %w", pipeline.ErrInvalid), pipeline.KindBadData, false, codes.InvalidArgument, http.StatusBadRequest},
		{"overloaded", fmt.Errorf("spool full: %w", pipeline.ErrOverloaded), pipeline.KindOverloaded, true, codes.ResourceExhausted, http.StatusTooManyRequests},
		{"too large", fmt.Errorf("spool: %w", pipeline.ErrTooLarge), pipeline.KindTooLarge, false, codes.ResourceExhausted, http.StatusRequestEntityTooLarge},
		{"unavailable", pipeline.ErrUnavailable, pipeline.KindUnavailable, true, codes.Unavailable, http.StatusServiceUnavailable},
		{"any other error", errors.New("disk on fire"), pipeline.KindUnavailable, true, codes.Unavailable, http.StatusServiceUnavailable},
		{"an *Error", fmt.Errorf("wrapped: %w", pipeline.Refuse(pipeline.KindUnauthenticated, "no token")), pipeline.KindUnauthenticated, false, codes.Unauthenticated, http.StatusUnauthorized},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := pipeline.Classify(tc.err)
			if e.Kind != tc.kind || e.Kind.Retryable() != tc.retry || e.Kind.GRPCCode() != tc.grpc || e.Kind.HTTPStatus() != tc.http {
				t.Errorf("%v: kind %v retry %v %v %d", tc.err, e.Kind, e.Kind.Retryable(), e.Kind.GRPCCode(), e.Kind.HTTPStatus())
			}
			if !errors.Is(e, tc.err) && !errors.Is(tc.err, e) {
				t.Errorf("the *Error does not wrap %v", tc.err)
			}
		})
	}
	if k := pipeline.Kind(0); k.String() != "internal" || k.HTTPStatus() != http.StatusInternalServerError {
		t.Errorf("the zero Kind: %v %d", k, k.HTTPStatus())
	}
}

func TestSinks(t *testing.T) {
	var got []otlpwire.Signal
	sink := pipeline.SinkFunc(func(_ context.Context, req *pipeline.Request) (pipeline.Outcome, error) {
		got = append(got, req.Signal)
		return pipeline.Outcome{}, nil
	})
	v := pipeline.Validating(sink)
	s := pipeline.Sinks{Metrics: []pipeline.Sink{v}, Logs: []pipeline.Sink{sink}}
	if len(s.Of(otlpwire.SignalMetrics)) != 1 || len(s.Of(otlpwire.SignalLogs)) != 1 || len(s.Of(otlpwire.SignalTraces)) != 0 || s.Of(0) != nil {
		t.Errorf("Of: %v", s)
	}
	if !pipeline.IsValidating(v) || pipeline.IsValidating(sink) {
		t.Error("IsValidating does not tell the marked sink")
	}
	if _, err := v.Consume(context.Background(), &pipeline.Request{Signal: otlpwire.SignalMetrics}); err != nil || len(got) != 1 {
		t.Errorf("the marked sink did not pass the request on: %v %v", err, got)
	}
}
