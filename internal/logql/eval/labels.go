package eval

import (
	"slices"
	"strings"
)

// Label is a name and value.
type Label struct{ Name, Value string }

// Labels are sorted by name, each name once.
type Labels []Label

// Get returns the value of name, "" if absent.
func (ls Labels) Get(name string) (string, bool) {
	i, ok := slices.BinarySearchFunc(ls, name, func(l Label, n string) int { return strings.Compare(l.Name, n) })
	if !ok {
		return "", false
	}
	return ls[i].Value, true
}

// key is a string identifying the label set.
func (ls Labels) key() string {
	var b strings.Builder
	for _, l := range ls {
		b.WriteString(l.Name)
		b.WriteByte(0)
		b.WriteString(l.Value)
		b.WriteByte(0)
	}
	return b.String()
}

// Map returns the labels as a map.
func (ls Labels) Map() map[string]string {
	m := make(map[string]string, len(ls))
	for _, l := range ls {
		m[l.Name] = l.Value
	}
	return m
}

// labelsOf sorts and dedupes (the first value of a name wins).
func labelsOf(m []Label) Labels {
	slices.SortStableFunc(m, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
	return slices.CompactFunc(m, func(a, b Label) bool { return a.Name == b.Name })
}

// size is roughly the bytes ls holds, for the query budget.
func (ls Labels) size() int64 {
	n := int64(24 * len(ls))
	for _, l := range ls {
		n += int64(32 + len(l.Name) + len(l.Value))
	}
	return n
}
