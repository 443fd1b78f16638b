package receiver

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"

	"github.com/wirehouse/wirehouse/internal/lokipush"
	"github.com/wirehouse/wirehouse/internal/pipeline"
	tenantctx "github.com/wirehouse/wirehouse/internal/tenant"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// LokiPushPath is where Loki's push API is served.
const LokiPushPath = "/loki/api/v1/push"

// LokiPushHandler is the handler of Loki's push API (LokiPushPath) that
// the receiver's HTTP server mounts: its Authenticator checks each push
// (without one, X-Scope-OrgID names the tenant). nil if the receiver has
// no logs sink.
func (r *Receiver) LokiPushHandler() http.Handler {
	if len(r.sinks.Of(otlpwire.SignalLogs)) == 0 {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serveLokiPush(w, req, false, false) })
}

// LokiPushHandlerBehind is LokiPushHandler for a server that checked the
// credentials itself (serve's admin port, beside Loki's query API): the
// tenant is the request context's (tenant.FromContext), or with
// headerTenant the one X-Scope-OrgID names. nil if the receiver has no
// logs sink.
func (r *Receiver) LokiPushHandlerBehind(headerTenant bool) http.Handler {
	if len(r.sinks.Of(otlpwire.SignalLogs)) == 0 {
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.serveLokiPush(w, req, true, headerTenant) })
}

// lokiDecoders are the push decoders in use, each with its scratch space.
var lokiDecoders sync.Pool

// lokiJSONFactor is the in-flight budget a JSON push reserves per byte
// of JSON (after decompression), besides the body: encoding/json's
// strings and slices of it.
const lokiJSONFactor = 4

// serveLokiPush handles one push: credentials (or X-Scope-OrgID without
// them; behind a server that checked them, the tenant it named, or with
// headerTenant X-Scope-OrgID's), the body read and decompressed under the receiver's limits, the
// streams transcoded to an OTLP logs request (internal/lokipush), which
// goes to the logs sinks as any OTLP request. The answer is Loki's: 204
// once every sink returned, or the refusal's status with its reason in
// plain text; entries Loki would refuse (lokipush.Stats) are counted as
// refused and answered 400 with the first reason, after the others were
// stored, as Loki does.
func (r *Receiver) serveLokiPush(w http.ResponseWriter, req *http.Request, behind, headerTenant bool) {
	start := time.Now()
	const sig = otlpwire.SignalLogs
	if req.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "the push API requires POST", http.StatusMethodNotAllowed)
		return
	}
	ctx, byHeader := req.Context(), r.auth == nil
	if behind {
		byHeader = headerTenant
	} else {
		var rerr *pipeline.Error
		if ctx, rerr = r.authenticate(ctx, sig, transportLoki, req.Header.Get("Authorization")); rerr != nil {
			w.Header().Set("WWW-Authenticate", `Bearer realm="Loki"`)
			lokiError(w, rerr, 0)
			return
		}
	}
	var rerr *pipeline.Error
	if org := req.Header.Get("X-Scope-OrgID"); byHeader && org != "" {
		// Without tokens the header names the tenant, as Loki's.
		if !tenantctx.Valid(org) {
			rerr = pipeline.Refuse(pipeline.KindBadData, "invalid X-Scope-OrgID %.64q: a tenant is 1 to 150 letters, digits, '-', '_' or '.'", org)
			r.finish(sig, transportLoki, start, -1, 0, pipeline.Outcome{}, rerr)
			lokiError(w, rerr, 0)
			return
		}
		ctx = tenantctx.NewContext(ctx, org)
	}
	isJSON, ok := lokiMediaType(req.Header.Get("Content-Type"))
	if !ok {
		rerr = pipeline.Refuse(pipeline.KindUnsupportedMedia, "unsupported content type %q: use application/x-protobuf (snappy) or application/json", req.Header.Get("Content-Type"))
		r.finish(sig, transportLoki, start, -1, 0, pipeline.Outcome{}, rerr)
		lokiError(w, rerr, 0)
		return
	}
	out, size, records, rerr := r.readLokiPush(req.WithContext(ctx), isJSON)
	r.finish(sig, transportLoki, start, size, records, out, rerr)
	switch {
	case rerr != nil:
		lokiError(w, rerr, r.retryAfter(rerr))
	case out.Rejected > 0:
		http.Error(w, out.Message, http.StatusBadRequest)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// lokiError writes rerr as Loki does: its status and its text.
func lokiError(w http.ResponseWriter, rerr *pipeline.Error, retryAfter time.Duration) {
	if rerr.Kind.Retryable() && retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(retryAfter/time.Second))))
	}
	http.Error(w, rerr.Error(), rerr.Kind.HTTPStatus())
}

// lokiMediaType reports whether ct is JSON (true) or protobuf (false, the
// push API's default: an empty type too).
func lokiMediaType(ct string) (isJSON, ok bool) {
	if ct == "" {
		return false, true
	}
	return parseMediaType(ct)
}

// readLokiPush reads, decompresses and transcodes a push and consumes
// the logs request it makes. records counts every entry, out.Rejected
// those refused (by the decoder or the sinks).
func (r *Receiver) readLokiPush(req *http.Request, isJSON bool) (out pipeline.Outcome, size, records int, rerr *pipeline.Error) {
	size = -1
	enc := req.Header.Get("Content-Encoding")
	if strings.EqualFold(enc, "snappy") && !isJSON {
		enc = "" // the protobuf is snappy as it is
	}
	cod, ok := parseCoding(enc)
	if !ok {
		return out, size, 0, pipeline.Refuse(pipeline.KindUnsupportedMedia, "unsupported Content-Encoding %q: use gzip, deflate, zstd or none", enc)
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
	if !isJSON {
		n, err := snappy.DecodedLen(body)
		switch {
		case err != nil:
			return out, size, 0, pipeline.Refuse(pipeline.KindBadData, "decode snappy: %v", err)
		case int64(n) > dlimit:
			return out, size, 0, pipeline.Refuse(pipeline.KindTooLarge, "decompressed request body of %d bytes exceeds the limit of %d bytes", n, dlimit)
		case !res.grow(int64(n)):
			return out, size, 0, overBudget(&res, errOverBudget)
		}
		pb := getBuffer()
		defer putBuffer(pb)
		if pb.b, err = snappy.Decode(pb.b[:cap(pb.b)], body); err != nil {
			return out, size, 0, pipeline.Refuse(pipeline.KindBadData, "decode snappy: %v", err)
		}
		body = pb.b
	} else if !res.grow(lokiJSONFactor * int64(len(body))) {
		return out, size, 0, overBudget(&res, errOverBudget)
	}
	d, _ := lokiDecoders.Get().(*lokipush.Decoder)
	if d == nil {
		d = &lokipush.Decoder{}
	}
	defer lokiDecoders.Put(d)
	d.Limits, d.Reserve = r.cfg.Loki, res.grow
	defer func() { d.Reserve = nil }()
	otlp := getBuffer()
	defer putBuffer(otlp)
	var st lokipush.Stats
	if isJSON {
		otlp.b, st, err = d.JSON(otlp.b[:0], body)
	} else {
		otlp.b, st, err = d.Proto(otlp.b[:0], body)
	}
	switch {
	case errors.Is(err, lokipush.ErrBudget):
		return out, size, st.Entries, overBudget(&res, errOverBudget)
	case err != nil:
		return out, size, 0, pipeline.Refuse(pipeline.KindBadData, "%v", err)
	}
	size = len(otlp.b)
	if len(otlp.b) > 0 {
		var kept int
		out, kept, rerr = r.consume(req.Context(), otlpwire.SignalLogs, transportLoki, otlp.b, &res)
		if rerr != nil {
			return out, size, kept + st.Refused, rerr
		}
	}
	out.Rejected += int64(st.Refused)
	if st.Refused > 0 {
		msg := st.Reason + "; " + strconv.Itoa(st.Refused) + " of " + strconv.Itoa(st.Entries) + " entries refused"
		out.Message = strings.TrimPrefix(out.Message+"; "+msg, "; ")
	}
	return out, size, st.Entries, nil
}
