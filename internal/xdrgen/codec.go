package xdrgen

import (
	"bytes"
	"fmt"
)

// Encoding emitters write statements that append x (an addressable Go
// expression of the declaration's Go type) to the local b; on error the
// generated function returns (dst, err). Decoding emitters write statements
// that consume into x from the local d and return err on failure. Loop
// variables are named by nesting depth so nested arrays do not collide.

var appendFn = map[TypeKind]string{
	TInt: "AppendInt32", TUint: "AppendUint32", THyper: "AppendInt64", TUhyper: "AppendUint64",
	TFloat: "AppendFloat32", TDouble: "AppendFloat64", TQuad: "AppendQuadruple", TBool: "AppendBool",
}

var decodeFn = map[TypeKind]string{
	TInt: "DecodeInt32", TUint: "DecodeUint32", THyper: "DecodeInt64", TUhyper: "DecodeUint64",
	TFloat: "DecodeFloat32", TDouble: "DecodeFloat64", TQuad: "DecodeQuadruple", TBool: "DecodeBool",
}

func w(buf *bytes.Buffer, format string, args ...any) {
	fmt.Fprintf(buf, format, args...)
	buf.WriteByte('\n')
}

// optionalAlias returns the optional declaration behind a typedef alias
// chain ending in T *x, or nil.
func optionalAlias(t *TypeSpec) *Decl {
	for t.Kind == TIdent && t.def.Kind == DefTypedef && isAlias(t.def) {
		if t.def.Decl.Kind == DeclOptional {
			return t.def.Decl
		}
		t = t.def.Decl.Type
	}
	return nil
}

func (g *gen) encType(buf *bytes.Buffer, x string, t *TypeSpec, depth int) {
	if fn, ok := appendFn[t.Kind]; ok {
		w(buf, "b = xdr.%s(b, %s)", fn, x)
		return
	}
	if opt := optionalAlias(t); opt != nil {
		g.enc(buf, x, opt, depth)
		return
	}
	g.needErr = true
	if isEnum(t) {
		w(buf, "if b, err = %s.AppendXDR(b); err != nil {\nreturn dst, err\n}", x)
		return
	}
	w(buf, "if b, err = %s.appendXDR(b, depth); err != nil {\nreturn dst, err\n}", x)
}

// isEnum reports whether t is an enum, possibly through alias typedefs.
// Enums have no appendXDR: they do not nest.
func isEnum(t *TypeSpec) bool {
	for t.Kind == TIdent {
		switch {
		case t.def.Kind == DefEnum:
			return true
		case isAlias(t.def) && t.def.Decl.Kind == DeclScalar:
			t = t.def.Decl.Type
		default:
			return false
		}
	}
	return false
}

func (g *gen) enc(buf *bytes.Buffer, x string, decl *Decl, depth int) {
	i := fmt.Sprintf("i%d", depth)
	switch decl.Kind {
	case DeclVoid:
	case DeclScalar:
		g.encType(buf, x, decl.Type, depth)
	case DeclFixed:
		if decl.Type.Kind == TOpaque {
			w(buf, "b = xdr.AppendFixedOpaque(b, %s[:])", x)
			return
		}
		w(buf, "for %s := range %s {", i, x)
		g.encType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}")
	case DeclVar:
		g.needErr = true
		switch decl.Type.Kind {
		case TOpaque:
			w(buf, "if b, err = xdr.AppendOpaque(b, %s, %s); err != nil {\nreturn dst, err\n}", x, g.max(decl))
			return
		case TString:
			w(buf, "if b, err = xdr.AppendString(b, %s, %s); err != nil {\nreturn dst, err\n}", x, g.max(decl))
			return
		}
		w(buf, "if b, err = xdr.AppendCount(b, len(%s), %s); err != nil {\nreturn dst, err\n}", x, g.max(decl))
		w(buf, "for %s := range %s {", i, x)
		g.encType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}")
	case DeclOptional:
		w(buf, "if %s == nil {\nb = xdr.AppendBool(b, false)\n} else {\nb = xdr.AppendBool(b, true)", x)
		g.encType(buf, "(*"+x+")", decl.Type, depth+1)
		w(buf, "}")
	}
}

func (g *gen) decType(buf *bytes.Buffer, x string, t *TypeSpec, depth int) {
	g.needErr = true
	if fn, ok := decodeFn[t.Kind]; ok {
		w(buf, "if %s, err = d.%s(); err != nil {\nreturn err\n}", x, fn)
		return
	}
	if opt := optionalAlias(t); opt != nil {
		g.dec(buf, x, opt, depth)
		return
	}
	w(buf, "if err = %s.DecodeXDR(d); err != nil {\nreturn err\n}", x)
}

func (g *gen) dec(buf *bytes.Buffer, x string, decl *Decl, depth int) {
	i := fmt.Sprintf("i%d", depth)
	switch decl.Kind {
	case DeclVoid:
	case DeclScalar:
		g.decType(buf, x, decl.Type, depth)
	case DeclFixed:
		g.needErr = true
		if decl.Type.Kind == TOpaque {
			w(buf, "if err = d.DecodeFixedBytesInto(%s[:]); err != nil {\nreturn err\n}", x)
			return
		}
		w(buf, "for %s := range %s {", i, x)
		g.decType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}")
	case DeclVar:
		g.needErr = true
		switch decl.Type.Kind {
		case TOpaque:
			w(buf, "{\nvar t []byte\nif t, err = d.DecodeOpaque(%s); err != nil {\nreturn err\n}", g.max(decl))
			w(buf, "%s = append(%s[:0], t...)\n}", x, x)
			return
		case TString:
			w(buf, "if %s, err = d.DecodeString(%s); err != nil {\nreturn err\n}", x, g.max(decl))
			return
		}
		n := fmt.Sprintf("n%d", depth)
		w(buf, "{\nvar %s int\nif %s, err = d.DecodeCount(%s, %d); err != nil {\nreturn err\n}", n, n, g.max(decl), decl.elemMin)
		w(buf, "if cap(%s) >= %s {\n%s = %s[:%s]\n} else {\n%s = make([]%s, %s)\n}", x, n, x, x, n, x, g.goType(decl.Type), n)
		w(buf, "for %s := range %s {", i, x)
		g.decType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}\n}")
	case DeclOptional:
		g.needErr = true
		ok := fmt.Sprintf("ok%d", depth)
		w(buf, "{\nvar %s bool\nif %s, err = d.DecodeOptional(); err != nil {\nreturn err\n}", ok, ok)
		w(buf, "if !%s {\n%s = nil\n} else {", ok, x)
		if m := decl.elemMin; m > 4 {
			// Check that the input can hold the value before allocating it.
			w(buf, "if err = d.CheckCount(1, %d); err != nil {\nreturn err\n}", m)
		}
		w(buf, "if %s == nil {\n%s = new(%s)\n}", x, x, g.goType(decl.Type))
		g.decType(buf, "(*"+x+")", decl.Type, depth+1)
		w(buf, "}\n}")
	}
}
