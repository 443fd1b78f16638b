package promapi

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	jsoniter "github.com/json-iterator/go"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/util/annotations"
)

// metadataArgs are the parameters of the series and label endpoints.
type metadataArgs struct {
	sets       [][]*labels.Matcher
	mint, maxt int64
	limit      int
	q          storage.Querier // the caller closes it
}

// parseMetadataArgs reads the parameters of the series and label
// endpoints in Prometheus' order, so that of several bad ones the same is
// named: match[] if required (that there is one), limit, start, end, then
// match[] parsed; and opens a querier over the window. On error it has
// answered.
func (a *API) parseMetadataArgs(w http.ResponseWriter, r *http.Request, matchRequired bool) (metadataArgs, bool) {
	var args metadataArgs
	raw, aerr := matchSelectors(r, matchRequired)
	if aerr == nil {
		args.limit, aerr = parseLimit(r)
	}
	if aerr == nil {
		args.mint, args.maxt, aerr = window(r)
	}
	if aerr == nil {
		args.sets, aerr = a.parseMatchers(raw, matchRequired)
	}
	if aerr != nil {
		a.fail(w, aerr)
		return args, false
	}
	q, err := a.q.Querier(args.mint, args.maxt)
	if err != nil {
		a.fail(w, &apiError{errExec, err})
		return args, false
	}
	args.q = q
	return args, true
}

func (a *API) series(w http.ResponseWriter, r *http.Request) {
	args, ok := a.parseMetadataArgs(w, r, true)
	if !ok {
		return
	}
	defer args.q.Close()
	sets, q, limit := args.sets, args.q, args.limit
	hints := &storage.SelectHints{Start: args.mint, End: args.maxt, Func: "series", Limit: hintLimit(limit)}
	var all []storage.SeriesSet
	for _, set := range sets {
		all = append(all, q.Select(r.Context(), len(sets) > 1, hints, set...))
	}
	merged := storage.NewMergeSeriesSet(all, 0, storage.ChainedSeriesMerge)
	var (
		found    []labels.Labels
		warnings annotations.Annotations
	)
	for merged.Next() {
		if limit > 0 && len(found) == limit {
			warnings = warnings.Add(errors.New("results truncated due to limit"))
			break
		}
		found = append(found, merged.At().Labels())
	}
	if err := merged.Err(); err != nil {
		a.fail(w, queryError(err))
		return
	}
	warnings.Merge(merged.Warnings())
	a.respond(w, warnings, func(s *jsoniter.Stream) {
		writeArray(s, found, func(ls labels.Labels) {
			writeLabels(s, ls)
		})
	})
}

// stringsOf collects, for each matcher set (or once without one), what
// get returns, sorted and without duplicates, cut to limit.
func (a *API) stringsOf(w http.ResponseWriter, r *http.Request, get func(storage.Querier, []*labels.Matcher, *storage.LabelHints) ([]string, annotations.Annotations, error)) {
	args, ok := a.parseMetadataArgs(w, r, false)
	if !ok {
		return
	}
	defer args.q.Close()
	sets, q, limit := args.sets, args.q, args.limit
	hints := &storage.LabelHints{Limit: hintLimit(limit)}
	if len(sets) == 0 {
		sets = [][]*labels.Matcher{nil}
	}
	var (
		out      []string
		warnings annotations.Annotations
	)
	for _, set := range sets {
		vals, ws, err := get(q, set, hints)
		if err != nil {
			a.fail(w, queryError(err))
			return
		}
		warnings.Merge(ws)
		out = append(out, vals...)
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if limit > 0 && len(out) > limit {
		out = out[:limit]
		warnings = warnings.Add(errors.New("results truncated due to limit"))
	}
	a.respond(w, warnings, func(s *jsoniter.Stream) {
		writeArray(s, out, func(v string) {
			s.WriteString(v)
		})
	})
}

func (a *API) labelNames(w http.ResponseWriter, r *http.Request) {
	a.stringsOf(w, r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelNames(r.Context(), h, ms...)
	})
}

func (a *API) labelValues(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if strings.HasPrefix(name, "U__") { // Prometheus' escaping of names outside the legacy charset
		name = model.UnescapeName(name, model.ValueEncodingEscaping)
	}
	if !model.UTF8Validation.IsValidLabelName(name) {
		a.fail(w, badData("invalid label name: %q", name))
		return
	}
	a.stringsOf(w, r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelValues(r.Context(), name, h, ms...)
	})
}
