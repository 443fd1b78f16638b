package xdrgen

import (
	"bytes"
	"fmt"
)

// Size emitters write statements adding the encoded size of x to the
// local n. They mirror the encoding emitters in codec.go.

var fixedSize = map[TypeKind]int{
	TInt: 4, TUint: 4, THyper: 8, TUhyper: 8, TFloat: 4, TDouble: 8, TQuad: 16, TBool: 4,
}

// typeStatic returns the encoded size of t if every value of t has the
// same size.
func typeStatic(t *TypeSpec) (int64, bool) {
	if k, ok := fixedSize[t.Kind]; ok {
		return int64(k), true
	}
	if t.Kind != TIdent {
		return 0, false
	}
	switch t.def.Kind {
	case DefEnum:
		return 4, true
	case DefTypedef:
		return declStatic(t.def.Decl)
	case DefStruct:
		var n int64
		for _, f := range t.def.Fields {
			k, ok := declStatic(f)
			if !ok {
				return 0, false
			}
			n += k
		}
		return n, true
	}
	return 0, false
}

func declStatic(x *Decl) (int64, bool) {
	switch x.Kind {
	case DeclVoid:
		return 0, true
	case DeclScalar:
		return typeStatic(x.Type)
	case DeclFixed:
		if x.Type.Kind == TOpaque {
			return int64(x.min), true // the padded length, from the checker
		}
		k, ok := typeStatic(x.Type)
		return k * x.Size.val, ok
	}
	return 0, false
}

func (g *gen) sizeType(buf *bytes.Buffer, x string, t *TypeSpec, depth int) {
	if k, ok := typeStatic(t); ok {
		w(buf, "n += %d", k)
		return
	}
	if opt := optionalAlias(t); opt != nil {
		g.sizeDecl(buf, x, opt, depth)
		return
	}
	w(buf, "n += %s.sizeXDR(depth)", x)
}

func (g *gen) sizeDecl(buf *bytes.Buffer, x string, decl *Decl, depth int) {
	i := fmt.Sprintf("i%d", depth)
	switch decl.Kind {
	case DeclVoid:
	case DeclScalar:
		g.sizeType(buf, x, decl.Type, depth)
	case DeclFixed:
		if k, ok := declStatic(decl); ok {
			w(buf, "n += %d", k)
			return
		}
		w(buf, "for %s := range %s {", i, x)
		g.sizeType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}")
	case DeclVar:
		switch decl.Type.Kind {
		case TOpaque, TString:
			w(buf, "n += xdr.SizeOpaque(len(%s))", x)
			return
		}
		if k, ok := typeStatic(decl.Type); ok {
			w(buf, "n += 4 + %d*len(%s)", k, x)
			return
		}
		w(buf, "n += 4")
		w(buf, "for %s := range %s {", i, x)
		g.sizeType(buf, x+"["+i+"]", decl.Type, depth+1)
		w(buf, "}")
	case DeclOptional:
		w(buf, "n += 4\nif %s != nil {", x)
		g.sizeType(buf, "(*"+x+")", decl.Type, depth+1)
		w(buf, "}")
	}
}

// sizeMethod emits SizeXDR and sizeXDR for name with the given body. Like
// appendXDR, sizeXDR carries the nesting depth (counted by structs and
// unions) and stops descending past xdr.DefaultMaxDepth, so SizeXDR of a
// cyclic value returns instead of recursing forever.
func (g *gen) sizeMethod(name string, body string, counts bool) {
	g.p("// SizeXDR returns the length of v's encoding, assuming v is valid")
	g.p("// (AppendXDR would succeed).")
	g.p("func (v *%s) SizeXDR() int {\nreturn v.sizeXDR(0)\n}\n", name)
	g.p("// sizeXDR is SizeXDR inside depth open structs and unions.")
	g.p("func (v *%s) sizeXDR(depth int) int {", name)
	if counts {
		g.p("depth++\nif depth > xdr.DefaultMaxDepth {\nreturn 0 // AppendXDR fails with xdr.ErrDepth\n}")
	}
	g.p("n := 0")
	g.buf.WriteString(body)
	g.p("return n\n}\n")
}
