package readapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/wirehouse/wirehouse/internal/lakeread"
	"github.com/wirehouse/wirehouse/internal/logql"
	"github.com/wirehouse/wirehouse/internal/querybudget"
)

func TestClassify(t *testing.T) {
	_, perr := logql.Parse(`{`)
	for _, c := range []struct {
		err  error
		kind Kind
		http int
		grpc codes.Code
	}{
		{Errorf(KindBadRequest, "bad %s", "x"), KindBadRequest, 400, codes.InvalidArgument},
		{fmt.Errorf("wrapped: %w", Errorf(KindNotFound, "trace not found")), KindNotFound, 404, codes.NotFound},
		{&querybudget.BusyError{Reason: "concurrency", RetryAfter: time.Second}, KindBusy, 429, codes.ResourceExhausted},
		{fmt.Errorf("read: %w", &querybudget.LimitError{Limit: 1}), KindTooLarge, 413, codes.ResourceExhausted},
		{&lakeread.LimitError{What: "bytes read", Limit: 1}, KindTooLarge, 413, codes.ResourceExhausted},
		{perr, KindBadRequest, 400, codes.InvalidArgument},
		{fmt.Errorf("q: %w", context.DeadlineExceeded), KindTimeout, http.StatusGatewayTimeout, codes.DeadlineExceeded},
		{context.Canceled, KindCanceled, 499, codes.Canceled},
		{errors.New("disk on fire"), KindInternal, 500, codes.Internal},
	} {
		k := Classify(c.err)
		if k != c.kind || k.HTTPStatus() != c.http || k.GRPCCode() != c.grpc {
			t.Errorf("%v: %v %d %v, want %v %d %v", c.err, k, k.HTTPStatus(), k.GRPCCode(), c.kind, c.http, c.grpc)
		}
	}
	if perr == nil {
		t.Fatal("logql parsed `{`")
	}
	if Kind(200).String() != "internal" {
		t.Error("an unknown kind is not internal")
	}
}
