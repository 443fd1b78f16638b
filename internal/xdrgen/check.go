package xdrgen

import (
	"fmt"
	"math"
)

// checker resolves identifiers and validates a Spec before generation.
type checker struct {
	spec    *Spec
	types   map[string]*Def
	consts  map[string]int64
	enumOf  map[string]*Def // enum member name -> its enum
	where   map[string]Pos
	min     map[*Def]int
	minBusy map[*Def]bool
}

// Check resolves names and reports the first semantic error with its
// file:line:col: duplicate or undeclared identifiers, sizes that are not
// constants, bad discriminant types, duplicate or invalid case values,
// and types that would contain themselves.
//
// Check also records on spec what the generator needs: resolved names and
// values, each declaration's minimum wire size and each union's
// discriminant type.
func Check(spec *Spec) error {
	c := &checker{
		spec: spec, types: map[string]*Def{}, consts: map[string]int64{"TRUE": 1, "FALSE": 0},
		enumOf: map[string]*Def{}, where: map[string]Pos{}, min: map[*Def]int{}, minBusy: map[*Def]bool{},
	}
	err := c.run()
	spec.checked = err == nil
	return err
}

func errorf(pos Pos, format string, args ...any) error {
	return fmt.Errorf("%s: %s", pos, fmt.Sprintf(format, args...))
}

func (c *checker) declare(name string, pos Pos) error {
	if prev, ok := c.where[name]; ok {
		return errorf(pos, "%s redeclared (previous declaration at %s)", name, prev)
	}
	if name == "TRUE" || name == "FALSE" {
		return errorf(pos, "%s is predeclared", name)
	}
	c.where[name] = pos
	return nil
}

func (c *checker) run() error {
	// Pass 1: declare every name so forward references work.
	for _, d := range c.spec.Defs {
		if err := c.declare(d.Name, d.Pos); err != nil {
			return err
		}
		switch d.Kind {
		case DefConst:
			c.consts[d.Name] = d.Value.Lit
			d.Value.val = d.Value.Lit
		case DefEnum:
			c.types[d.Name] = d
			for _, m := range d.Members {
				if err := c.declare(m.Name, m.Pos); err != nil {
					return err
				}
				c.enumOf[m.Name] = d
			}
		default:
			c.types[d.Name] = d
		}
	}
	// Pass 2: enum values (may name consts or earlier members).
	for _, d := range c.spec.Defs {
		if d.Kind != DefEnum {
			continue
		}
		for _, m := range d.Members {
			v, err := c.value(m.Value, math.MinInt32, math.MaxInt32, "enum value")
			if err != nil {
				return err
			}
			m.val = v
			c.consts[m.Name] = v
		}
	}
	// Pass 3: declarations.
	for _, d := range c.spec.Defs {
		var err error
		switch d.Kind {
		case DefTypedef:
			err = c.decl(d.Decl)
		case DefStruct:
			err = c.fields(d)
		case DefUnion:
			err = c.union(d)
		}
		if err != nil {
			return err
		}
	}
	if err := c.typedefCycles(); err != nil {
		return err
	}
	// Pass 4: no type may contain itself except through * or <>, and array
	// elements must take space on the wire.
	for _, d := range c.spec.Defs {
		if _, err := c.minSize(d); err != nil {
			return err
		}
	}
	// Pass 5: record minimum sizes, used to check counts and lengths
	// against the remaining input before allocating: each declaration's,
	// and each variable array's element or optional value's.
	for _, d := range c.spec.Defs {
		for _, x := range declsOf(d) {
			m, err := c.declMin(x)
			if err != nil {
				return err
			}
			x.min = m
			if x.Kind != DeclVar && x.Kind != DeclOptional || x.Type.Kind == TOpaque || x.Type.Kind == TString {
				continue
			}
			em, err := c.typeMin(x.Type)
			if err != nil {
				return err
			}
			if em == 0 && x.Kind == DeclVar {
				return errorf(x.Pos, "array %s has elements that encode to zero bytes", x.Name)
			}
			x.elemMin = em
		}
	}
	return nil
}

// declsOf lists the declarations directly inside d.
func declsOf(d *Def) []*Decl {
	switch d.Kind {
	case DefTypedef:
		return []*Decl{d.Decl}
	case DefStruct:
		return d.Fields
	case DefUnion:
		out := []*Decl{d.Disc}
		for _, cs := range d.Cases {
			out = append(out, cs.Decl)
		}
		if d.Default != nil {
			out = append(out, d.Default)
		}
		return out
	}
	return nil
}

// value resolves v to a number in [lo, hi].
func (c *checker) value(v *Value, lo, hi int64, what string) (int64, error) {
	n := v.Lit
	if v.Ident != "" {
		var ok bool
		n, ok = c.consts[v.Ident]
		if !ok {
			if _, isType := c.types[v.Ident]; isType {
				return 0, errorf(v.Pos, "%s %s is a type, not a constant", what, v.Ident)
			}
			return 0, errorf(v.Pos, "undeclared identifier %s", v.Ident)
		}
	}
	if n < lo || n > hi {
		return 0, errorf(v.Pos, "%s %d out of range [%d, %d]", what, n, lo, hi)
	}
	v.val = n
	return n, nil
}

func (c *checker) fields(d *Def) error {
	seen := map[string]Pos{}
	for _, f := range d.Fields {
		if p, ok := seen[goName(f.Name)]; ok {
			return errorf(f.Pos, "field %s redeclared in %s (previous at %s)", f.Name, d.Name, p)
		}
		seen[goName(f.Name)] = f.Pos
		if err := c.decl(f); err != nil {
			return err
		}
	}
	return nil
}

func (c *checker) decl(x *Decl) error {
	if x.Kind == DeclVoid {
		return nil
	}
	t := x.Type
	if t.Kind == TIdent {
		if t.def == nil {
			d, ok := c.types[t.Name]
			if !ok {
				if _, isConst := c.consts[t.Name]; isConst {
					return errorf(t.Pos, "%s is a constant, not a type", t.Name)
				}
				return errorf(t.Pos, "undeclared identifier %s", t.Name)
			}
			t.def = d
		}
	}
	if x.Size != nil {
		if _, err := c.value(x.Size, 0, math.MaxUint32, "size"); err != nil {
			return err
		}
		if x.Kind == DeclFixed && x.Size.val > math.MaxInt32 {
			return errorf(x.Size.Pos, "fixed size %d too large", x.Size.val)
		}
	}
	return nil
}

// discKind returns the base kind of a discriminant declaration, following
// typedefs, and the enum definition if it is one.
func (c *checker) discKind(x *Decl) (TypeKind, *Def, error) {
	for {
		if x.Kind != DeclScalar {
			return 0, nil, errorf(x.Pos, "discriminant %s must be a plain int, unsigned int, bool or enum", x.Name)
		}
		t := x.Type
		if t.Kind != TIdent {
			if t.Kind != TInt && t.Kind != TUint && t.Kind != TBool {
				return 0, nil, errorf(t.Pos, "discriminant %s has type %s; want int, unsigned int, bool or enum", x.Name, kindName(t.Kind))
			}
			return t.Kind, nil, nil
		}
		switch t.def.Kind {
		case DefEnum:
			return TIdent, t.def, nil
		case DefTypedef:
			x = t.def.Decl
		default:
			return 0, nil, errorf(t.Pos, "discriminant %s has type %s, which is not an integer or enum", x.Name, t.def.Name)
		}
	}
}

func (c *checker) union(d *Def) error {
	if err := c.decl(d.Disc); err != nil {
		return err
	}
	kind, enum, err := c.discKind(d.Disc)
	if err != nil {
		return err
	}
	d.discKind, d.discEnum = kind, enum
	lo, hi := int64(math.MinInt32), int64(math.MaxInt32)
	if kind == TUint {
		lo, hi = 0, math.MaxUint32
	}
	if kind == TBool {
		lo, hi = 0, 1
	}
	seen := map[int64]Pos{}
	arms := map[string]Pos{goName(d.Disc.Name): d.Disc.Pos}
	checkArm := func(x *Decl) error {
		if x.Kind == DeclVoid {
			return nil
		}
		if p, ok := arms[goName(x.Name)]; ok {
			return errorf(x.Pos, "arm %s redeclared in union %s (previous at %s)", x.Name, d.Name, p)
		}
		arms[goName(x.Name)] = x.Pos
		return c.decl(x)
	}
	for _, cs := range d.Cases {
		for _, v := range cs.Values {
			n, err := c.value(v, lo, hi, "case value")
			if err != nil {
				return err
			}
			if enum != nil && !enumHas(enum, n) {
				return errorf(v.Pos, "case value %d is not a member of enum %s", n, enum.Name)
			}
			if p, ok := seen[n]; ok {
				return errorf(v.Pos, "duplicate case value %d in union %s (previous at %s)", n, d.Name, p)
			}
			seen[n] = v.Pos
		}
		if err := checkArm(cs.Decl); err != nil {
			return err
		}
	}
	if d.Default != nil {
		if err := checkArm(d.Default); err != nil {
			return err
		}
	}
	return nil
}

func enumHas(e *Def, n int64) bool {
	for _, m := range e.Members {
		if m.val == n {
			return true
		}
	}
	return false
}

func kindName(k TypeKind) string {
	return [...]string{"int", "unsigned int", "hyper", "unsigned hyper", "float", "double",
		"quadruple", "bool", "opaque", "string", "identifier"}[k]
}

// minSize returns the fewest bytes a value of d takes on the wire, failing
// if d contains itself without a * or <> in between.
func (c *checker) minSize(d *Def) (int, error) {
	if n, ok := c.min[d]; ok {
		return n, nil
	}
	c.minBusy[d] = true // typeMin reports reaching d again as a cycle
	defer delete(c.minBusy, d)
	n := 0
	switch d.Kind {
	case DefEnum:
		n = 4
	case DefTypedef:
		m, err := c.declMin(d.Decl)
		if err != nil {
			return 0, err
		}
		n = m
	case DefStruct:
		for _, f := range d.Fields {
			m, err := c.declMin(f)
			if err != nil {
				return 0, err
			}
			if n += m; n > maxMinSize {
				return 0, errorf(d.Pos, "struct %s encodes to more than 4 GiB", d.Name)
			}
		}
	case DefUnion:
		best := -1
		for _, a := range declsOf(d)[1:] { // the arms, after the discriminant
			m, err := c.declMin(a)
			if err != nil {
				return 0, err
			}
			if best < 0 || m < best {
				best = m
			}
		}
		if n = 4 + best; n > maxMinSize {
			return 0, errorf(d.Pos, "union %s encodes to more than 4 GiB", d.Name)
		}
	}
	c.min[d] = n
	return n, nil
}

func (c *checker) declMin(x *Decl) (int, error) {
	switch x.Kind {
	case DeclVoid:
		return 0, nil
	case DeclVar, DeclOptional:
		return 4, nil // the length or flag; a pointer or slice breaks cycles
	case DeclFixed:
		if x.Type.Kind == TOpaque {
			n := int(x.Size.val)
			return n + (-n & 3), nil
		}
		em, err := c.typeMin(x.Type)
		if err != nil {
			return 0, err
		}
		if em > 0 && x.Size.val > int64(maxMinSize/em) {
			return 0, errorf(x.Pos, "array %s encodes to more than 4 GiB", x.Name)
		}
		return em * int(x.Size.val), nil
	}
	return c.typeMin(x.Type)
}

// maxMinSize bounds the smallest encoding of any type. A larger one could
// never be decoded from memory, and its Go array type would not compile;
// the bound also keeps the sums and products of minimum sizes far from
// overflowing int.
const maxMinSize = 1<<32 - 1

func (c *checker) typeMin(t *TypeSpec) (int, error) {
	switch t.Kind {
	case THyper, TUhyper, TDouble:
		return 8, nil
	case TQuad:
		return 16, nil
	case TIdent:
		if c.minBusy[t.def] {
			return 0, errorf(t.Pos, "%s contains itself; use optional data (*) or a variable-length array", t.def.Name)
		}
		return c.minSize(t.def)
	}
	return 4, nil
}

// typedefCycles rejects typedef chains that lead back to themselves
// without going through a struct or union (typedef foo *foo;).
func (c *checker) typedefCycles() error {
	for _, d := range c.spec.Defs {
		if d.Kind != DefTypedef {
			continue
		}
		seen := map[*Def]bool{}
		for cur := d; cur != nil && cur.Kind == DefTypedef; {
			if seen[cur] {
				return errorf(d.Pos, "typedef %s refers to itself", d.Name)
			}
			seen[cur] = true
			cur = cur.Decl.Type.def
		}
	}
	return nil
}
