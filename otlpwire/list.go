package otlpwire

import (
	"iter"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// List is a view of a repeated message field of one message: the spans of
// a scope, the events of a span, the exemplars of a data point. It aliases
// the request. The zero value is an empty list.
type List[T ~[]byte] struct {
	b   []byte // the range of the message holding every occurrence
	off int32  // offset of b within the message, for error positions (clamped)
	num uint16 // the field number (OTLP's are all below 2^16)
	// name names the field in errors. Index and narrow integers keep a
	// List at four words, which the compiler holds in registers; a larger
	// one is copied through memory at every call that takes it by value
	// (a point's exemplars, each point list's All).
	name listName
}

// listName indexes listNames: the repeated fields a List views.
type listName uint8

const (
	nameNone listName = iota
	nameDataPoints
	nameExemplars
	nameQuantileValues
	nameEvents
	nameLinks
)

var listNames = [...]string{"", "data_points", "exemplars", "quantile_values", "events", "links"}

func (n listName) String() string { return listNames[n] }

// set makes l the occurrences s of field num of msg. It stores each
// field in place: a Read that built the List and copied it into its
// Fields stalled on the copy (a 16-byte load of a temporary just written
// 8 bytes at a time), a tenth of a deep metrics walk.
func (l *List[T]) set(msg []byte, s span, num uint16, name listName) {
	if s.last == 0 {
		*l = List[T]{}
		return
	}
	l.b, l.off, l.num, l.name = s.of(msg), clampOff(s.first), num, name
}

// Each calls f with every element in order and returns the first error,
// f's or a malformed element's.
func (l List[T]) Each(f func(T) error) error {
	if len(l.b) == 0 {
		return nil // the common case for exemplars: no iterator to build
	}
	for v, err := range l.All() {
		if err != nil {
			return err
		}
		if err := f(v); err != nil {
			return err
		}
	}
	return nil
}

// All iterates the elements in order. A malformed element header ends the
// iteration with a non-nil error as the last pair; the elements themselves
// are checked when they are read.
func (l List[T]) All() iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		if len(l.b) == 0 {
			return
		}
		ok := true
		err := repeated(l.b, protowire.Number(l.num), l.name.String(), func(v []byte, _ int) bool {
			ok = yield(T(v), nil)
			return ok
		})
		if err != nil && ok {
			yield(nil, shift(err, int(l.off)))
		}
	}
}

// Len counts the elements.
func (l List[T]) Len() (int, error) {
	if len(l.b) == 0 {
		return 0, nil
	}
	n, err := count(l.b, protowire.Number(l.num), l.name.String())
	return n, shift(err, int(l.off))
}

// Resource is the encoded body of an opentelemetry.proto.resource.v1.Resource:
//
//	message Resource {
//	  repeated KeyValue attributes = 1;
//	  uint32 dropped_attributes_count = 2;
//	  repeated EntityRef entity_refs = 3;
//	}
type Resource []byte

// ResourceFields holds the fields of a Resource read in one pass.
type ResourceFields struct {
	Attributes             Attributes
	DroppedAttributesCount uint32
}

// Read decodes the resource's fields into f in one pass. The attributes
// alias r.
func (r Resource) Read(f *ResourceFields) error {
	*f = ResourceFields{}
	var attrs span
	for i := 0; i < len(r); {
		t, v, _, j := field(r, i)
		if j < 0 || resourceSchema.bad(t) {
			if err := resourceSchema.failAt(r, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			j = skipRun(r, j, 0x0a)
			attrs.add(i, j)
		case 2:
			f.DroppedAttributesCount = uint32(v)
		}
		i = j
	}
	f.Attributes.set(r, attrs, 1)
	return nil
}

var resourceSchema = newSchema(map[protowire.Number]fieldSpec{1: bytesf("attributes"), 2: varintf("dropped_attributes_count"), 3: bytesf("entity_refs")})

// Attributes returns the resource's attributes.
func (r Resource) Attributes() (Attributes, error) {
	var f ResourceFields
	err := r.Read(&f)
	return f.Attributes, err
}

// ServiceName returns the string value of the resource's first
// "service.name" attribute (as pdata's Map.Get finds it), or nil when there
// is none or it is not a string. The result aliases r. It does not
// allocate.
func (r Resource) ServiceName() ([]byte, error) {
	attrs, err := r.Attributes()
	if err != nil {
		return nil, err
	}
	v, _, err := attrs.Get("service.name")
	return v.Str(), err
}

// set makes a the occurrences s of field num of msg, in place (see
// List.set).
func (a *Attributes) set(msg []byte, s span, num protowire.Number) {
	if s.last == 0 {
		*a = Attributes{}
		return
	}
	a.b, a.off, a.num = s.of(msg), clampOff(s.first), num
}

// Scope is the encoded body of an
// opentelemetry.proto.common.v1.InstrumentationScope:
//
//	message InstrumentationScope {
//	  string name = 1; string version = 2;
//	  repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4;
//	}
type Scope []byte

// ScopeFields holds the fields of an InstrumentationScope read in one pass.
// Byte slices alias the request.
type ScopeFields struct {
	Name, Version          []byte
	Attributes             Attributes
	DroppedAttributesCount uint32
}

// Read decodes the scope's fields into f in one pass.
func (sc Scope) Read(f *ScopeFields) error {
	*f = ScopeFields{}
	var attrs span
	for i := 0; i < len(sc); {
		t, v, s, j := field(sc, i)
		if j < 0 || scopeSchema.bad(t) {
			if err := scopeSchema.failAt(sc, i, t, j); err != nil {
				return err
			}
		}
		n := protowire.Number(t >> 3)
		switch n {
		case 1:
			f.Name = s
		case 2:
			f.Version = s
		case 3:
			j = skipRun(sc, j, 0x1a)
			attrs.add(i, j)
		case 4:
			f.DroppedAttributesCount = uint32(v)
		}
		i = j
	}
	f.Attributes.set(sc, attrs, 3)
	return nil
}

var scopeSchema = newSchema(map[protowire.Number]fieldSpec{1: bytesf("name"), 2: bytesf("version"), 3: bytesf("attributes"), 4: varintf("dropped_attributes_count")})

// clampOff narrows a message offset for a view's error positions.
func clampOff(off int) int32 { return int32(min(off, math.MaxInt32)) }
