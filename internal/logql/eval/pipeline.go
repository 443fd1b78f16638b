package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// entry is a log line going through a pipeline, with its labels: the
// stream's, the structured metadata and those the pipeline added.
type entry struct {
	ts     int64
	line   []byte
	stream Labels // the index labels
	labels map[string]string
	order  []string // label names in the order they were set, for parsers' collisions
	// init is how many names of order the stream and the structured
	// metadata set, before the pipeline's stages.
	init int
}

// categorized returns the entry's labels that are not index labels: its
// structured metadata (set before the stages) and the labels the stages
// set (parsed), each sorted; nil for none.
func (e *entry) categorized() (metadata, parsed Labels) {
	for i, name := range e.order {
		v, ok := e.labels[name]
		if !ok {
			continue // dropped
		}
		if _, isStream := e.stream.Get(name); isStream && i < e.init {
			continue
		}
		if i < e.init {
			metadata = append(metadata, Label{name, v})
		} else {
			parsed = append(parsed, Label{name, v})
		}
	}
	return labelsOf(metadata), labelsOf(parsed)
}

func (e *entry) set(name, v string) {
	if _, ok := e.labels[name]; !ok {
		e.order = append(e.order, name)
	}
	e.labels[name] = v
}

func (e *entry) del(name string) { delete(e.labels, name) }

// sorted returns the entry's labels, sorted by name (a map's names are
// distinct: no stable sort or compaction needed, as labelsOf does).
func (e *entry) sorted() Labels {
	out := make([]Label, 0, len(e.labels))
	for k, v := range e.labels {
		out = append(out, Label{k, v})
	}
	slices.SortFunc(out, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// stage is a compiled pipeline stage: it changes e and tells whether the
// line is kept.
type stage func(e *entry) bool

// compilePipeline compiles a log query's stages.
func compilePipeline(stages []logql.Stage) ([]stage, error) {
	var out []stage
	for _, s := range stages {
		st, err := compileStage(s)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// compileStage compiles a stage with the constructor of its kind, each
// beside what it runs in its family's file (stage_*.go).
func compileStage(s logql.Stage) (stage, error) {
	switch s := s.(type) {
	case *logql.LineFilter:
		return compileLineFilter(s) // stage_filter.go
	case *logql.Parser:
		return compileParser(s) // stage_parser.go
	case *logql.LabelFilter:
		return compileLabelFilter(s) // stage_label.go
	case *logql.LabelFormat:
		return compileLabelFormat(s)
	case *logql.DropKeep:
		return compileDropKeep(s)
	case *logql.LineFormat:
		return compileLineFormat(s) // stage_line_format.go
	case *logql.Decolorize:
		return compileDecolorize(s)
	}
	return nil, fmt.Errorf("unsupported stage %s", s)
}
