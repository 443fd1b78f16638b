package receiver

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/wirehouse/wirehouse/internal/otlpjson"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// Media types of OTLP/HTTP bodies.
const (
	mediaProtobuf = "application/x-protobuf"
	mediaJSON     = "application/json"
)

func (r *Receiver) newHTTPHandler() http.Handler {
	mux := http.NewServeMux()
	for _, sig := range otlpwire.Signals {
		if len(r.sinks.Of(sig)) == 0 {
			continue
		}
		mux.HandleFunc(sig.HTTPPath(), func(w http.ResponseWriter, req *http.Request) {
			r.serveHTTP(sig, w, req)
		})
	}
	if h := r.LokiPushHandler(); h != nil {
		mux.Handle(LokiPushPath, h)
	}
	return mux
}

// serveHTTP handles one OTLP/HTTP export request; the steps and their
// statuses are in the OTLP/HTTP section of the spec.
func (r *Receiver) serveHTTP(sig otlpwire.Signal, w http.ResponseWriter, req *http.Request) {
	start := time.Now()
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "OTLP/HTTP export requires POST", http.StatusMethodNotAllowed)
		return
	}
	isJSON, ok := parseMediaType(req.Header.Get("Content-Type"))
	// Credentials first, as the Collector's auth does: an unknown client
	// learns nothing else about the request.
	ctx, rerr := r.authenticate(req.Context(), sig, transportHTTP, req.Header.Get("Authorization"))
	if rerr != nil {
		w.Header().Set("WWW-Authenticate", `Bearer realm="OTLP"`)
	}
	if !ok {
		if rerr == nil {
			rerr = pipeline.Refuse(pipeline.KindUnsupportedMedia, "unsupported content type %q: use %s or %s",
				req.Header.Get("Content-Type"), mediaProtobuf, mediaJSON)
			r.finish(sig, transportHTTP, start, -1, 0, pipeline.Outcome{}, rerr)
		}
		http.Error(w, rerr.Error(), rerr.Kind.HTTPStatus())
		return
	}
	var out pipeline.Outcome
	if rerr == nil {
		if ctx != req.Context() {
			req = req.WithContext(ctx) // the tenant
		}
		var size, records int
		out, size, records, rerr = r.readAndConsume(sig, req, isJSON)
		r.finish(sig, transportHTTP, start, size, records, out, rerr)
	}

	resp := getBuffer()
	defer putBuffer(resp)
	status := http.StatusOK
	switch {
	case rerr != nil:
		status = rerr.Kind.HTTPStatus()
		if rerr.Kind.Retryable() {
			w.Header().Set("Retry-After", strconv.Itoa(r.retryAfterSeconds(rerr)))
		}
		code := int32(rerr.Kind.GRPCCode())
		if isJSON {
			resp.b = appendStatusJSON(resp.b[:0], code, rerr.Error())
		} else {
			resp.b = appendStatus(resp.b[:0], code, rerr.Error())
		}
	case isJSON:
		resp.b = appendResponseJSON(resp.b[:0], sig, out)
	default:
		resp.b = appendResponse(resp.b[:0], out)
	}
	h := w.Header()
	if isJSON {
		h.Set("Content-Type", mediaJSON)
	} else {
		h.Set("Content-Type", mediaProtobuf)
	}
	h.Set("Content-Length", strconv.Itoa(len(resp.b)))
	w.WriteHeader(status)
	w.Write(resp.b) //nolint:errcheck // the client is gone; nothing to do
}

// readAndConsume reads, decompresses, transcodes and consumes the body.
// size is the decoded protobuf size, or -1 if never reached.
func (r *Receiver) readAndConsume(sig otlpwire.Signal, req *http.Request, isJSON bool) (out pipeline.Outcome, size, records int, rerr *pipeline.Error) {
	size = -1
	cod, ok := parseCoding(req.Header.Get("Content-Encoding"))
	if !ok {
		return out, size, 0, pipeline.Refuse(pipeline.KindUnsupportedMedia, "unsupported Content-Encoding %q: use gzip, deflate, zstd or none", req.Header.Get("Content-Encoding"))
	}
	res := r.reservationFor(req.Context())
	defer res.release()
	body, done, rerr := r.readBody(req, cod, &res)
	defer done()
	if rerr != nil {
		return out, size, 0, rerr
	}
	dlimit := r.cfg.MaxDecompressedBytes
	var err error
	if isJSON {
		// pdata allocates up to about 6 times the JSON's size to decode it
		// and marshal the result (5.7 times for one record of a million
		// small attributes, 3 times for typical logs: measured with
		// runtime.MemStats), all of it live until the request ends.
		if !res.grow(jsonFactor * int64(len(body))) {
			if res.never {
				return out, size, 0, pipeline.Refuse(pipeline.KindTooLarge, "OTLP/JSON request of %d bytes needs more memory than the in-flight limit of %d bytes; send it in smaller requests or as protobuf", len(body), r.budget.max)
			}
			return out, size, 0, pipeline.Refuse(pipeline.KindOverloaded, "server busy: %v, retry later", errOverBudget)
		}
		body, err = otlpjson.ToProto(sig, body)
		if err != nil {
			return out, size, 0, pipeline.Refuse(pipeline.KindBadData, "invalid OTLP/JSON %s: %v", sig.RequestName(), err)
		}
		if int64(len(body)) > dlimit {
			return out, size, 0, pipeline.Refuse(pipeline.KindTooLarge, "request of %d bytes exceeds the limit of %d bytes", len(body), dlimit)
		}
	}
	size = len(body)
	out, records, rerr = r.consume(req.Context(), sig, transportHTTP, body, &res)
	return out, size, records, rerr
}

// readBody reads req's body and decompresses it (coding cod) under the
// receiver's limits, in pooled buffers charged to res. The bytes are valid
// until done is called (always, also after an error).
func (r *Receiver) readBody(req *http.Request, cod coding, res *reservation) (body []byte, done func(), rerr *pipeline.Error) {
	var held []*buffer
	done = func() {
		for _, b := range held {
			putBuffer(b)
		}
	}
	limit := r.cfg.MaxRequestBytes
	if req.ContentLength > limit {
		return nil, done, pipeline.Refuse(pipeline.KindTooLarge, "request body of %d bytes exceeds the limit of %d bytes", req.ContentLength, limit)
	}
	raw := getBuffer()
	held = append(held, raw)
	var err error
	// The announced length is only a hint, capped like decompress's: a
	// client that announces 64 MiB and then stalls must not hold 64 MiB of
	// the in-flight budget before sending a byte; readAll reserves more as
	// the body arrives.
	raw.b, err = readAll(raw.b, req.Body, min(max(req.ContentLength, 0), maxHint), limit, res)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, done, pipeline.Refuse(pipeline.KindTooLarge, "request body exceeds the limit of %d bytes", limit)
	case errors.Is(err, errOverBudget):
		return nil, done, overBudget(res, err)
	case err != nil:
		return nil, done, pipeline.Refuse(pipeline.KindBadData, "read request body: %v", err)
	}
	if cod == codingNone {
		return raw.b, done, nil
	}
	dlimit := r.cfg.MaxDecompressedBytes
	dec := getBuffer()
	held = append(held, dec)
	dec.b, err = decompress(dec.b, raw.b, cod, dlimit, res)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, done, pipeline.Refuse(pipeline.KindTooLarge, "decompressed request body exceeds the limit of %d bytes", dlimit)
	case errors.Is(err, errOverBudget):
		return nil, done, overBudget(res, err)
	case err != nil:
		return nil, done, pipeline.Refuse(pipeline.KindBadData, "decompress request body: %v", err)
	}
	return dec.b, done, nil
}

// jsonFactor is the in-flight budget an OTLP/JSON request reserves per
// byte of JSON (after decompression), besides the body itself.
const jsonFactor = 6

// overBudget is the refusal for a failed reservation: too large if the
// request could not fit even on an idle server, else overloaded.
func overBudget(res *reservation, err error) *pipeline.Error {
	switch {
	case res.never && res.overShare:
		return pipeline.Refuse(pipeline.KindTooLarge, "request needs more memory than the tenant's share of the in-flight limit, %d bytes", res.share.max)
	case res.never:
		return pipeline.Refuse(pipeline.KindTooLarge, "request needs more memory than the in-flight limit of %d bytes", res.b.max)
	case res.overShare:
		return pipeline.Refuse(pipeline.KindOverloaded, "the tenant's requests hold its share of the in-flight limit (%d bytes), retry later", res.share.max)
	}
	return pipeline.Refuse(pipeline.KindOverloaded, "server busy: %v, retry later", err)
}

// parseMediaType reports whether ct is OTLP's JSON (true) or protobuf
// (false) media type; ok is false for anything else.
func parseMediaType(ct string) (isJSON, ok bool) {
	switch ct { // fast path for the exact values SDKs send
	case mediaProtobuf:
		return false, true
	case mediaJSON:
		return true, true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false, false
	}
	switch mt {
	case mediaProtobuf, "application/protobuf":
		return false, true
	case mediaJSON:
		return true, true
	}
	return false, false
}
