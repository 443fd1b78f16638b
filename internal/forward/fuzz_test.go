package forward

import (
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzResponses feeds what a downstream endpoint may answer to the
// parsers of export responses, error bodies and Retry-After: none may
// panic, a rejected count is never negative, a delay never negative.
func FuzzResponses(f *testing.F) {
	ps := protowire.AppendTag(nil, 1, protowire.VarintType)
	ps = protowire.AppendVarint(ps, 3)
	ps = protowire.AppendTag(ps, 2, protowire.BytesType)
	ps = protowire.AppendString(ps, "three are bad")
	resp := protowire.AppendTag(nil, 1, protowire.BytesType)
	resp = protowire.AppendBytes(resp, ps)
	st := protowire.AppendTag(nil, 1, protowire.VarintType)
	st = protowire.AppendVarint(st, 3)
	st = protowire.AppendTag(st, 2, protowire.BytesType)
	st = protowire.AppendString(st, "bad request")
	f.Add(resp, "application/x-protobuf", "1")
	f.Add(st, "application/x-protobuf", "Wed, 21 Oct 2015 07:28:00 GMT")
	f.Add([]byte(`{"code":3,"message":"bad"}`), "application/json", "-1")
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, "application/x-protobuf", "99999999999999999999")
	f.Fuzz(func(t *testing.T, body []byte, contentType, retry string) {
		rejected, msg := partialSuccess(body)
		if rejected < 0 {
			t.Fatalf("rejected %d (%q): negative", rejected, msg)
		}
		_ = statusMessage(body, contentType)
		if d := retryAfter(retry, time.Unix(1_800_000_000, 0)); d < 0 {
			t.Fatalf("Retry-After %q: negative delay %v", retry, d)
		}
	})
}
