package eval

import (
	"github.com/wirehouse/wirehouse/internal/traceql"
)

// Value is a typed value: an attribute's, an intrinsic's or a
// literal's. Its zero value is nil (absent).
type Value = traceql.Static

// KeyValue is an attribute.
type KeyValue struct {
	Key   string
	Value Value
}

// Event is a span event.
type Event struct {
	Name         string
	TimeUnixNano int64
	Attrs        []KeyValue
}

// Link is a span link.
type Link struct {
	TraceID [16]byte
	SpanID  [8]byte
	Attrs   []KeyValue
}

// Span is a span as the evaluator reads it. Its attribute slices are the
// caller's; the evaluator never changes them.
type Span struct {
	TraceID       [16]byte
	SpanID        [8]byte
	ParentID      [8]byte // zero for a root span
	Name          string
	Kind          traceql.Kind
	Status        traceql.Status
	StatusMessage string
	StartUnixNano int64
	EndUnixNano   int64
	Attrs         []KeyValue // the span's
	Resource      []KeyValue // its resource's
	ScopeName     string     // its instrumentation scope's name and version
	ScopeVersion  string
	ScopeAttrs    []KeyValue
	Events        []Event
	Links         []Link
}

// Trace is the spans of one trace, as many of them as the caller has
// (a trace partly read is evaluated as it is: a span whose parent is
// missing is a root of it).
type Trace struct {
	Spans []Span
}

// tree is a trace's structure: each span's parent (index, -1 for none),
// children, and nested-set numbers (left and right in a depth-first walk;
// a span's descendants are the spans whose left lies between its left and
// right), and what the trace-level intrinsics read.
type tree struct {
	parent      []int32
	children    [][]int32
	left, right []int32
	root        int // the earliest root span, -1 if none
	start, end  int64
}

func buildTree(t *Trace) *tree {
	n := len(t.Spans)
	tr := &tree{parent: make([]int32, n), children: make([][]int32, n), left: make([]int32, n), right: make([]int32, n), root: -1}
	byID := make(map[[8]byte]int32, n)
	for i := range t.Spans {
		if _, dup := byID[t.Spans[i].SpanID]; !dup {
			byID[t.Spans[i].SpanID] = int32(i)
		}
	}
	var roots []int32
	for i := range t.Spans {
		s := &t.Spans[i]
		if i == 0 || s.StartUnixNano < tr.start {
			tr.start = s.StartUnixNano
		}
		if i == 0 || s.EndUnixNano > tr.end {
			tr.end = s.EndUnixNano
		}
		p, ok := byID[s.ParentID]
		if s.ParentID == ([8]byte{}) || !ok || p == int32(i) {
			tr.parent[i] = -1
			roots = append(roots, int32(i))
			continue
		}
		tr.parent[i] = p
		tr.children[p] = append(tr.children[p], int32(i))
	}
	for _, r := range roots {
		if t.Spans[r].ParentID != ([8]byte{}) {
			continue // a span whose parent is missing: not the trace's root
		}
		if tr.root < 0 || t.Spans[r].StartUnixNano < t.Spans[tr.root].StartUnixNano {
			tr.root = int(r)
		}
	}
	// Nested sets, iteratively (a trace can be deep). A cycle of parent
	// ids (a bad trace) leaves its spans unnumbered: they have no root.
	next := int32(1)
	type frame struct{ span, child int32 }
	var stack []frame
	for _, r := range roots {
		tr.left[r], next = next, next+1
		stack = append(stack[:0], frame{r, 0})
		for len(stack) > 0 {
			f := &stack[len(stack)-1]
			if int(f.child) < len(tr.children[f.span]) {
				c := tr.children[f.span][f.child]
				f.child++
				tr.left[c], next = next, next+1
				stack = append(stack, frame{c, 0})
				continue
			}
			tr.right[f.span], next = next, next+1
			stack = stack[:len(stack)-1]
		}
	}
	return tr
}

// isDescendant reports whether span d is a descendant of span a.
func (tr *tree) isDescendant(d, a int32) bool {
	return tr.left[a] != 0 && tr.left[d] > tr.left[a] && tr.right[d] < tr.right[a]
}

// Summary is what a search answer says of a trace.
type Summary struct {
	RootService, RootName string // of its earliest span without a parent id; "" if it has none
	HasRoot               bool
	Start, End            int64 // its first start and last end, Unix ns
}

// Summarize returns t's Summary.
func Summarize(t *Trace) Summary {
	if len(t.Spans) == 0 {
		return Summary{}
	}
	tr := buildTree(t)
	s := Summary{Start: tr.start, End: tr.end}
	if tr.root >= 0 {
		r := &t.Spans[tr.root]
		s.HasRoot, s.RootName = true, r.Name
		s.RootService = lookup(r.Resource, "service.name").S
	}
	return s
}
