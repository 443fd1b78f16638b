package xdrgen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// label renders a case value as a Go switch label of the discriminant's
// type: bool literal, the enum member or const name, or the number.
func (g *gen) label(v *Value, kind TypeKind, enum *Def) string {
	if kind == TBool {
		return strconv.FormatBool(v.val != 0)
	}
	if v.Ident != "" && enum != nil {
		for _, m := range enum.Members {
			if m.Name == v.Ident {
				return goConst(v.Ident)
			}
		}
	}
	return g.size(v)
}

func (g *gen) caseLabels(c *Case, kind TypeKind, enum *Def) string {
	var ls []string
	for _, v := range c.Values {
		ls = append(ls, g.label(v, kind, enum))
	}
	return strings.Join(ls, ", ")
}

// boxed reports whether a union arm is held through a pointer: its type is
// a struct, a union or a fixed-length array, directly or through typedefs.
// Only the selected arm is allocated, so a union's Go size stays a few words
// per arm whatever its arm types are. Without this, an array of unions with
// a void arm and a large inline arm would allocate the large arm's size for
// every 4-byte element of hostile input.
func boxed(x *Decl) bool {
	if x.Kind == DeclFixed {
		return true
	}
	if x.Kind != DeclScalar {
		return false
	}
	for t := x.Type; t.Kind == TIdent; {
		switch t.def.Kind {
		case DefStruct, DefUnion:
			return true
		case DefTypedef:
			switch t.def.Decl.Kind {
			case DeclFixed:
				return true
			case DeclScalar:
				t = t.def.Decl.Type
				continue
			}
		}
		return false
	}
	return false
}

// armType is the Go type of a union arm field.
func (g *gen) armType(x *Decl) string {
	if boxed(x) {
		return "*" + g.declType(x)
	}
	return g.declType(x)
}

// armEnc emits the encoding of arm field f; a nil boxed arm encodes as
// the zero value.
func (g *gen) armEnc(buf *bytes.Buffer, f string, x *Decl) {
	if !boxed(x) {
		g.enc(buf, f, x, 0)
		return
	}
	w(buf, "a := %s\nif a == nil {\na = new(%s)\n}", f, g.declType(x))
	g.enc(buf, "(*a)", x, 0)
}

// armDec emits the decoding of arm field f. A boxed arm reuses the pointer
// v held before it was cleared (prev), else allocates once the input is
// known to hold at least the arm's minimum size.
func (g *gen) armDec(buf *bytes.Buffer, f string, x *Decl) {
	if !boxed(x) {
		g.dec(buf, "v."+f, x, 0)
		return
	}
	g.needErr = true
	w(buf, "if v.%s = prev.%s; v.%s == nil {", f, f, f)
	if m := x.min; m > 0 {
		w(buf, "if err = d.CheckCount(1, %d); err != nil {\nreturn err\n}", m)
	}
	w(buf, "v.%s = new(%s)\n}", f, g.declType(x))
	g.dec(buf, "(*v."+f+")", x, 0)
}

// armSize emits the size of arm field f, mirroring armEnc.
func (g *gen) armSize(buf *bytes.Buffer, f string, x *Decl) {
	if !boxed(x) {
		g.sizeDecl(buf, f, x, 0)
		return
	}
	if k, ok := declStatic(x); ok {
		w(buf, "n += %d", k)
		return
	}
	w(buf, "a := %s\nif a == nil {\na = new(%s)\n}", f, g.declType(x))
	g.sizeDecl(buf, "(*a)", x, 0)
}

func (g *gen) union(d *Def) {
	name := goName(d.Name)
	kind, enum := d.discKind, d.discEnum
	disc := goName(d.Disc.Name)
	discType := g.declType(d.Disc)
	g.doc(d, fmt.Sprintf("%s is an XDR discriminated union: %s selects which arm field is valid.", name, disc))
	g.p("type %s struct {", name)
	g.p("%s %s", disc, discType)
	for _, c := range d.Cases {
		if c.Decl.Kind != DeclVoid {
			g.p("%s %s // %s == %s", goName(c.Decl.Name), g.armType(c.Decl), disc, strings.ReplaceAll(g.caseLabels(c, kind, enum), ", ", " or "))
		}
	}
	if d.Default != nil && d.Default.Kind != DeclVoid {
		g.p("%s %s // any other %s", goName(d.Default.Name), g.armType(d.Default), disc)
	}
	g.p("}\n")
	g.unionConstructors(d, name, disc, discType, kind, enum)
	g.unionAccessors(d, name, disc, kind, enum)

	// AppendXDR. A discriminant with no case and no default arm is
	// xdr.ErrDiscriminant.
	g.appendMethods(name, true)
	var body bytes.Buffer
	g.enc(&body, "v."+disc, d.Disc, 0)
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.armEnc(&body, "v."+goName(c.Decl.Name), c.Decl)
	}
	w(&body, "default:")
	if d.Default != nil {
		g.armEnc(&body, "v."+goName(d.Default.Name), d.Default)
	} else {
		w(&body, "return dst, xdr.NewError(len(dst), \"encode %s\", xdr.ErrDiscriminant)", name)
	}
	w(&body, "}")
	g.emitEncBody(body.String())

	// DecodeXDR
	anyBoxed := d.Default != nil && boxed(d.Default)
	for _, c := range d.Cases {
		anyBoxed = anyBoxed || boxed(c.Decl)
	}
	if anyBoxed {
		g.p("// DecodeXDR consumes a %s from d, first clearing v; the selected arm's", name)
		g.p("// pointer, if v already had one, is reused and so must not be shared.")
	} else {
		g.p("// DecodeXDR consumes a %s from d, first clearing v.", name)
	}
	g.p("// A discriminant with no case and no default arm is xdr.ErrDiscriminant.")
	var setup bytes.Buffer
	if anyBoxed {
		w(&setup, "prev := *v")
	}
	w(&setup, "*v = %s{}", name)
	body.Reset()
	if d.Default == nil {
		w(&body, "off := d.Offset()") // for ErrDiscriminant
	}
	g.dec(&body, "v."+disc, d.Disc, 0)
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.armDec(&body, goName(c.Decl.Name), c.Decl)
	}
	w(&body, "default:")
	if d.Default != nil {
		g.armDec(&body, goName(d.Default.Name), d.Default)
	} else {
		w(&body, "return xdr.NewError(off, \"decode %s\", xdr.ErrDiscriminant)", name)
	}
	w(&body, "}")
	g.decodeMethod(name, setup.String(), body.String(), true)

	body.Reset()
	w(&body, "n += 4")
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.armSize(&body, "v."+goName(c.Decl.Name), c.Decl)
	}
	if d.Default != nil {
		w(&body, "default:")
		g.armSize(&body, "v."+goName(d.Default.Name), d.Default)
	}
	w(&body, "}")
	g.sizeMethod(name, body.String(), true)
	g.binary(name)
}

func (g *gen) unionConstructors(d *Def, name, disc, discType string, kind TypeKind, enum *Def) {
	for _, c := range d.Cases {
		for _, v := range c.Values {
			fn := "New" + name + labelName(v)
			lbl := g.label(v, kind, enum)
			if kind == TBool {
				fn = "New" + name + strings.ToUpper(lbl[:1]) + lbl[1:]
			}
			if c.Decl.Kind == DeclVoid {
				g.p("// %s returns a %s with %s %s and no arm.", fn, name, disc, lbl)
				g.p("func %s() %s {\nreturn %s{%s: %s}\n}\n", fn, name, name, disc, lbl)
				continue
			}
			arm := goName(c.Decl.Name)
			g.p("// %s returns a %s with %s %s and arm %s.", fn, name, disc, lbl, arm)
			g.p("func %s(v %s) %s {\nreturn %s{%s: %s, %s: %s}\n}\n", fn, g.declType(c.Decl), name, name, disc, lbl, arm, armValue(c.Decl))
		}
	}
	if d.Default != nil {
		fn := "New" + name + "Default"
		g.p("// %s returns a %s taking the default arm. disc should not be one", fn, name)
		g.p("// of the listed cases, or encoding will use that case's arm instead.")
		if d.Default.Kind == DeclVoid {
			g.p("func %s(disc %s) %s {\nreturn %s{%s: disc}\n}\n", fn, discType, name, name, disc)
		} else {
			g.p("func %s(disc %s, v %s) %s {\nreturn %s{%s: disc, %s: %s}\n}\n",
				fn, discType, g.declType(d.Default), name, name, disc, goName(d.Default.Name), armValue(d.Default))
		}
	}
}

func (g *gen) unionAccessors(d *Def, name, disc string, kind TypeKind, enum *Def) {
	var all []string
	for _, c := range d.Cases {
		all = append(all, g.caseLabels(c, kind, enum))
		if c.Decl.Kind == DeclVoid {
			continue
		}
		arm := goName(c.Decl.Name)
		g.p("// Get%s returns the %s arm and whether %s selects it.", arm, arm, disc)
		if boxed(c.Decl) {
			g.p("// A nil %s reads as the zero value.", arm)
		}
		g.p("func (v *%s) Get%s() (%s, bool) {", name, arm, g.declType(c.Decl))
		g.p("var zero %s", g.declType(c.Decl))
		g.p("switch v.%s {\ncase %s:", disc, g.caseLabels(c, kind, enum))
		g.armReturn(c.Decl, arm)
		g.p("}\nreturn zero, false\n}\n")
	}
	if d.Default != nil && d.Default.Kind != DeclVoid {
		arm := goName(d.Default.Name)
		g.p("// Get%s returns the default arm and whether %s selects it.", arm, disc)
		if boxed(d.Default) {
			g.p("// A nil %s reads as the zero value.", arm)
		}
		g.p("func (v *%s) Get%s() (%s, bool) {", name, arm, g.declType(d.Default))
		g.p("var zero %s", g.declType(d.Default))
		g.p("switch v.%s {\ncase %s:\nreturn zero, false\n}", disc, strings.Join(all, ", "))
		g.armReturn(d.Default, arm)
		g.p("}\n")
	}
}

// armValue is the constructor expression storing parameter v in an arm.
func armValue(x *Decl) string {
	if boxed(x) {
		return "&v"
	}
	return "v"
}

// armReturn emits the accessor's return of arm field arm (zero is in scope).
func (g *gen) armReturn(x *Decl, arm string) {
	if boxed(x) {
		g.p("if v.%s == nil {\nreturn zero, true\n}\nreturn *v.%s, true", arm, arm)
		return
	}
	g.p("return v.%s, true", arm)
}
