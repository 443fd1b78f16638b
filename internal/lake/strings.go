package lake

// Strings is a column of byte strings stored in one arena: appending copies
// the bytes once and allocates only when the arena or the span list grows.
// A value can be appended again by reference (AppendRef), which is how
// resource and scope values are repeated on every row without copying.
type Strings struct {
	arena []byte
	spans []strSpan
}

type strSpan struct{ off, n uint32 }

// Append copies b as the next value and returns its reference.
func (s *Strings) Append(b []byte) Ref {
	r := s.store(b)
	s.spans = append(s.spans, strSpan(r))
	return r
}

// store copies b into the arena without adding a value.
func (s *Strings) store(b []byte) Ref {
	off := len(s.arena)
	s.arena = append(s.arena, b...)
	return Ref{off: uint32(off), n: uint32(len(b))}
}

// AppendRef appends a value stored earlier in this column's arena.
func (s *Strings) AppendRef(r Ref) { s.spans = append(s.spans, strSpan(r)) }

// Ref is a value stored in a Strings arena.
type Ref struct{ off, n uint32 }

// At returns value i; it aliases the arena and is valid until Reset.
func (s *Strings) At(i int) []byte {
	sp := s.spans[i]
	return s.arena[sp.off : sp.off+sp.n : sp.off+sp.n]
}

// Len is the number of values.
func (s *Strings) Len() int { return len(s.spans) }

// Reset empties the column and keeps its capacity.
func (s *Strings) Reset() {
	s.arena = s.arena[:0]
	s.spans = s.spans[:0]
}

// at returns the value stored as r; it aliases the arena and is valid
// until Reset.
func (s *Strings) at(r Ref) []byte { return s.arena[r.off : r.off+r.n : r.off+r.n] }
