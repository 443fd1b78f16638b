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
// match[] parsed; and opens a querier over the window, which the caller
// closes. Its error is an *apiError.
func (a *API) parseMetadataArgs(r *http.Request, matchRequired bool) (metadataArgs, error) {
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
		return args, aerr
	}
	q, err := a.q.Querier(args.mint, args.maxt)
	if err != nil {
		return args, &apiError{errExec, err}
	}
	args.q = q
	return args, nil
}

// series answers /api/v1/series: the label sets of the series match[]
// selects in the window, cut to limit. The answer closes the querier
// once written: the labels may be the querier's.
func (a *API) series(r *http.Request) (ans answer, _ error) {
	args, err := a.parseMetadataArgs(r, true)
	if err != nil {
		return answer{}, err
	}
	closeQuerier := func() { args.q.Close() }
	defer releaseUnlessDone(&ans, closeQuerier)
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
		return answer{}, queryError(err)
	}
	warnings.Merge(merged.Warnings())
	return answer{warnings: warnings, done: closeQuerier, data: func(s *jsoniter.Stream) {
		writeArray(s, found, func(ls labels.Labels) {
			writeLabels(s, ls)
		})
	}}, nil
}

// stringsOf answers with what get returns for each matcher set (or once
// without one), sorted and without duplicates, cut to limit. The answer
// closes the querier once written: the strings may be the querier's.
func (a *API) stringsOf(r *http.Request, get func(storage.Querier, []*labels.Matcher, *storage.LabelHints) ([]string, annotations.Annotations, error)) (ans answer, _ error) {
	args, err := a.parseMetadataArgs(r, false)
	if err != nil {
		return answer{}, err
	}
	closeQuerier := func() { args.q.Close() }
	defer releaseUnlessDone(&ans, closeQuerier)
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
			return answer{}, queryError(err)
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
	return answer{warnings: warnings, done: closeQuerier, data: func(s *jsoniter.Stream) {
		writeArray(s, out, func(v string) {
			s.WriteString(v)
		})
	}}, nil
}

// labelNames answers /api/v1/labels: the label names of the series
// match[] selects (all without one) in the window.
func (a *API) labelNames(r *http.Request) (answer, error) {
	return a.stringsOf(r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelNames(r.Context(), h, ms...)
	})
}

// labelValues answers /api/v1/label/<name>/values: the values of label
// name (escaped as Prometheus escapes names outside the legacy charset)
// of the series match[] selects (all without one) in the window.
func (a *API) labelValues(r *http.Request) (answer, error) {
	name := r.PathValue("name")
	if strings.HasPrefix(name, "U__") { // Prometheus' escaping of names outside the legacy charset
		name = model.UnescapeName(name, model.ValueEncodingEscaping)
	}
	if !model.UTF8Validation.IsValidLabelName(name) {
		return answer{}, badData("invalid label name: %q", name)
	}
	return a.stringsOf(r, func(q storage.Querier, ms []*labels.Matcher, h *storage.LabelHints) ([]string, annotations.Annotations, error) {
		return q.LabelValues(r.Context(), name, h, ms...)
	})
}
