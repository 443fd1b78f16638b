package xdrgen

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// unionDisc describes a union's discriminant after following typedefs.
func (g *gen) unionDisc(d *Def) (TypeKind, *Def) {
	x := d.Disc
	for x.Type.Kind == TIdent && x.Type.def.Kind == DefTypedef {
		x = x.Type.def.Decl
	}
	if x.Type.Kind == TIdent {
		return TIdent, x.Type.def
	}
	return x.Type.Kind, nil
}

// label renders a case value as a Go switch label of the discriminant's
// type: bool literal, the enum member or const name, or the number.
func (g *gen) label(v *Value, kind TypeKind, enum *Def) string {
	if kind == TBool {
		return strconv.FormatBool(v.val != 0)
	}
	if v.Ident != "" {
		if enum != nil {
			for _, m := range enum.Members {
				if m.Name == v.Ident {
					return goConst(v.Ident)
				}
			}
		}
		for _, d := range g.spec.Defs {
			if d.Kind == DefConst && d.Name == v.Ident {
				return goConst(v.Ident)
			}
		}
	}
	return strconv.FormatInt(v.val, 10)
}

func (g *gen) caseLabels(c *Case, kind TypeKind, enum *Def) string {
	var ls []string
	for _, v := range c.Values {
		ls = append(ls, g.label(v, kind, enum))
	}
	return strings.Join(ls, ", ")
}

func (g *gen) union(d *Def) {
	name := goName(d.Name)
	kind, enum := g.unionDisc(d)
	disc := goName(d.Disc.Name)
	discType := g.declType(d.Disc)
	g.doc(d, fmt.Sprintf("%s is an XDR discriminated union: %s selects which arm field is valid.", name, disc))
	g.p("type %s struct {", name)
	g.p("%s %s", disc, discType)
	for _, c := range d.Cases {
		if c.Decl.Kind != DeclVoid {
			g.p("%s %s // %s == %s", goName(c.Decl.Name), g.declType(c.Decl), disc, strings.ReplaceAll(g.caseLabels(c, kind, enum), ", ", " or "))
		}
	}
	if d.Default != nil && d.Default.Kind != DeclVoid {
		g.p("%s %s // any other %s", goName(d.Default.Name), g.declType(d.Default), disc)
	}
	g.p("}\n")
	g.unionConstructors(d, name, disc, discType, kind, enum)
	g.unionAccessors(d, name, disc, kind, enum)

	// AppendXDR
	g.p("// AppendXDR appends the encoding of v to dst. A discriminant with no")
	g.p("// case and no default arm is xdr.ErrDiscriminant; on error dst is")
	g.p("// returned unchanged.")
	g.p("func (v *%s) AppendXDR(dst []byte) ([]byte, error) {", name)
	var body bytes.Buffer
	g.needErr = false
	g.enc(&body, "v."+disc, d.Disc, 0)
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.enc(&body, "v."+goName(c.Decl.Name), c.Decl, 0)
	}
	w(&body, "default:")
	if d.Default != nil {
		g.enc(&body, "v."+goName(d.Default.Name), d.Default, 0)
	} else {
		w(&body, "return dst, xdr.NewError(len(dst), \"encode %s\", xdr.ErrDiscriminant)", name)
	}
	w(&body, "}")
	g.emitEncBody(body.String())

	// DecodeXDR
	g.p("// DecodeXDR consumes a %s from d, first clearing v. A discriminant", name)
	g.p("// with no case and no default arm is xdr.ErrDiscriminant.")
	g.p("func (v *%s) DecodeXDR(d *xdr.Decoder) error {", name)
	g.p("if err := d.Enter(); err != nil {\nreturn err\n}")
	g.p("*v = %s{}", name)
	body.Reset()
	g.needErr = false
	w(&body, "off := d.Offset()")
	g.dec(&body, "v."+disc, d.Disc, 0)
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.dec(&body, "v."+goName(c.Decl.Name), c.Decl, 0)
	}
	w(&body, "default:")
	if d.Default != nil {
		g.dec(&body, "v."+goName(d.Default.Name), d.Default, 0)
		w(&body, "_ = off")
	} else {
		w(&body, "return xdr.NewError(off, \"decode %s\", xdr.ErrDiscriminant)", name)
	}
	w(&body, "}")
	g.emitDecBody(body.String())

	body.Reset()
	w(&body, "n += 4")
	w(&body, "switch v.%s {", disc)
	for _, c := range d.Cases {
		w(&body, "case %s:", g.caseLabels(c, kind, enum))
		g.sizeDecl(&body, "v."+goName(c.Decl.Name), c.Decl, 0)
	}
	if d.Default != nil {
		w(&body, "default:")
		g.sizeDecl(&body, "v."+goName(d.Default.Name), d.Default, 0)
	}
	w(&body, "}")
	g.sizeMethod(name, body.String())
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
			g.p("func %s(v %s) %s {\nreturn %s{%s: %s, %s: v}\n}\n", fn, g.declType(c.Decl), name, name, disc, lbl, arm)
		}
	}
	if d.Default != nil {
		fn := "New" + name + "Default"
		g.p("// %s returns a %s taking the default arm. disc should not be one", fn, name)
		g.p("// of the listed cases, or encoding will use that case's arm instead.")
		if d.Default.Kind == DeclVoid {
			g.p("func %s(disc %s) %s {\nreturn %s{%s: disc}\n}\n", fn, discType, name, name, disc)
		} else {
			g.p("func %s(disc %s, v %s) %s {\nreturn %s{%s: disc, %s: v}\n}\n",
				fn, discType, g.declType(d.Default), name, name, disc, goName(d.Default.Name))
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
		g.p("func (v *%s) Get%s() (%s, bool) {", name, arm, g.declType(c.Decl))
		g.p("switch v.%s {\ncase %s:\nreturn v.%s, true\n}", disc, g.caseLabels(c, kind, enum), arm)
		g.p("var zero %s\nreturn zero, false\n}\n", g.declType(c.Decl))
	}
	if d.Default != nil && d.Default.Kind != DeclVoid {
		arm := goName(d.Default.Name)
		g.p("// Get%s returns the default arm and whether %s selects it.", arm, disc)
		g.p("func (v *%s) Get%s() (%s, bool) {", name, arm, g.declType(d.Default))
		g.p("switch v.%s {\ncase %s:\nvar zero %s\nreturn zero, false\n}", disc, strings.Join(all, ", "), g.declType(d.Default))
		g.p("return v.%s, true\n}\n", arm)
	}
}
