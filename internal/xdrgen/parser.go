package xdrgen

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Parse reads the RFC 4506 §6 language from src (named file in positions)
// and appends its definitions to spec. Errors name file:line:col.
func Parse(spec *Spec, file, src string) error {
	spec.checked = false
	if err := checkText(file, src); err != nil {
		return err
	}
	p := &parser{lx: newLexer(file, src), spec: spec}
	if err := p.advance(); err != nil {
		return err
	}
	for p.tok.kind != tEOF {
		if err := p.definition(); err != nil {
			return err
		}
	}
	spec.Pass = append(spec.Pass, p.lx.pass...)
	return nil
}

// checkText refuses a source that is not UTF-8 text: its comments and
// %-lines are copied into Go source, which may hold neither invalid UTF-8
// nor NUL bytes.
func checkText(file, src string) error {
	line, col := 1, 1 // columns count bytes, as the lexer's do
	for i := 0; i < len(src); {
		r, size := utf8.DecodeRuneInString(src[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return errorf(Pos{File: file, Line: line, Col: col}, "invalid UTF-8")
		case r == 0:
			return errorf(Pos{File: file, Line: line, Col: col}, "NUL byte")
		case r == '\n':
			line, col = line+1, 0
		}
		i += size
		col += size
	}
	return nil
}

type parser struct {
	lx   *lexer
	tok  token
	prev token
	spec *Spec
	// lifted collects anonymous types found while parsing a definition.
	lifted []*Def
	// stack holds the definitions whose bodies are being parsed.
	stack []*Def
}

func (p *parser) advance() error {
	p.prev = p.tok
	t, err := p.lx.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tIdent:
		return fmt.Sprintf("identifier %q", t.text)
	}
	return fmt.Sprintf("%q", t.text)
}

func (p *parser) is(text string) bool {
	return (p.tok.kind == tPunct || p.tok.kind == tIdent) && p.tok.text == text
}

func (p *parser) expect(text string) error {
	if !p.is(text) {
		return errorf(p.tok.pos, "expected %q, found %s", text, describe(p.tok))
	}
	return p.advance()
}

var keywords = map[string]bool{
	"bool": true, "case": true, "const": true, "default": true, "double": true,
	"quadruple": true, "enum": true, "float": true, "hyper": true, "int": true,
	"opaque": true, "string": true, "struct": true, "switch": true,
	"typedef": true, "union": true, "unsigned": true, "void": true,
}

func (p *parser) ident() (string, Pos, error) {
	t := p.tok
	if t.kind != tIdent || keywords[t.text] {
		return "", t.pos, errorf(t.pos, "expected identifier, found %s", describe(t))
	}
	return t.text, t.pos, p.advance()
}

func (p *parser) value() (*Value, error) {
	t := p.tok
	switch {
	case t.kind == tNum:
		return &Value{Pos: t.pos, Lit: t.num}, p.advance()
	case t.kind == tIdent && !keywords[t.text]:
		return &Value{Pos: t.pos, Ident: t.text}, p.advance()
	}
	return nil, errorf(t.pos, "expected constant or identifier, found %s", describe(t))
}

// definition parses one type-def or constant-def.
func (p *parser) definition() error {
	start := p.tok
	p.lifted = nil
	d := &Def{Pos: start.pos, Doc: start.doc}
	p.stack = append(p.stack[:0], d)
	var err error
	switch {
	case p.is("const"):
		err = p.constDef(d)
	case p.is("typedef"):
		err = p.typedef(d)
	case p.is("enum"), p.is("struct"), p.is("union"):
		kw := p.tok.text
		if err = p.advance(); err != nil {
			return err
		}
		if d.Name, d.Pos, err = p.ident(); err != nil {
			return err
		}
		err = p.body(kw, d)
	default:
		return errorf(start.pos, "expected definition (const, typedef, enum, struct or union), found %s", describe(start))
	}
	if err != nil {
		return err
	}
	if err := p.expect(";"); err != nil {
		return err
	}
	d.Src = strings.TrimSpace(p.lx.src[start.off : p.prev.off+1])
	p.spec.Defs = append(p.spec.Defs, d)
	for _, l := range p.lifted {
		l.Name = liftedName(l)
	}
	p.spec.Defs = append(p.spec.Defs, p.lifted...)
	return nil
}

// liftedName names an anonymous type after where it appears:
// outer_field, recursively for nested anonymous types.
func liftedName(d *Def) string {
	if !d.inline {
		return d.Name
	}
	return liftedName(d.parent) + "_" + d.field
}

func (p *parser) constDef(d *Def) error {
	if err := p.advance(); err != nil {
		return err
	}
	var err error
	d.Kind = DefConst
	if d.Name, d.Pos, err = p.ident(); err != nil {
		return err
	}
	if err := p.expect("="); err != nil {
		return err
	}
	if p.tok.kind != tNum {
		return errorf(p.tok.pos, "const %s: expected a number, found %s", d.Name, describe(p.tok))
	}
	d.Value, err = p.value()
	return err
}

func (p *parser) typedef(d *Def) error {
	if err := p.advance(); err != nil {
		return err
	}
	decl, err := p.declaration()
	if err != nil {
		return err
	}
	if decl.Kind == DeclVoid {
		return errorf(decl.Pos, "typedef of void")
	}
	d.Kind, d.Name, d.Pos, d.Decl = DefTypedef, decl.Name, decl.Pos, decl
	// typedef struct {...} name; names the anonymous type itself.
	if decl.Kind == DeclScalar && decl.Type.Kind == TIdent && decl.Type.def != nil && decl.Type.def.inline {
		in := decl.Type.def
		for i, l := range p.lifted {
			if l == in {
				p.lifted = append(p.lifted[:i], p.lifted[i+1:]...)
				break
			}
		}
		d.Kind, d.Decl = in.Kind, nil
		d.Members, d.Fields, d.Disc, d.Cases, d.Default = in.Members, in.Fields, in.Disc, in.Cases, in.Default
		for _, l := range p.lifted { // re-parent types lifted from inside it
			if l.parent == in {
				l.parent = d
			}
		}
	}
	return nil
}

// body parses an enum, struct or union body into d.
func (p *parser) body(kw string, d *Def) error {
	switch kw {
	case "enum":
		d.Kind = DefEnum
		return p.enumBody(d)
	case "struct":
		d.Kind = DefStruct
		return p.structBody(d)
	default:
		d.Kind = DefUnion
		return p.unionBody(d)
	}
}

func (p *parser) enumBody(d *Def) error {
	if err := p.expect("{"); err != nil {
		return err
	}
	for {
		m := &EnumMember{}
		var err error
		if m.Name, m.Pos, err = p.ident(); err != nil {
			return err
		}
		if err := p.expect("="); err != nil {
			return err
		}
		if m.Value, err = p.value(); err != nil {
			return err
		}
		d.Members = append(d.Members, m)
		if p.is("}") {
			return p.advance()
		}
		if err := p.expect(","); err != nil {
			return err
		}
	}
}

func (p *parser) structBody(d *Def) error {
	if err := p.expect("{"); err != nil {
		return err
	}
	for {
		decl, err := p.declaration()
		if err != nil {
			return err
		}
		if decl.Kind == DeclVoid {
			return errorf(decl.Pos, "void is only allowed as a union arm")
		}
		d.Fields = append(d.Fields, decl)
		if err := p.expect(";"); err != nil {
			return err
		}
		if p.is("}") {
			return p.advance()
		}
	}
}

func (p *parser) unionBody(d *Def) error {
	if err := p.expect("switch"); err != nil {
		return err
	}
	if err := p.expect("("); err != nil {
		return err
	}
	disc, err := p.declaration()
	if err != nil {
		return err
	}
	d.Disc = disc
	if err := p.expect(")"); err != nil {
		return err
	}
	if err := p.expect("{"); err != nil {
		return err
	}
	for p.is("case") {
		c := &Case{}
		for p.is("case") {
			if err := p.advance(); err != nil {
				return err
			}
			v, err := p.value()
			if err != nil {
				return err
			}
			c.Values = append(c.Values, v)
			if err := p.expect(":"); err != nil {
				return err
			}
		}
		if c.Decl, err = p.declaration(); err != nil {
			return err
		}
		if err := p.expect(";"); err != nil {
			return err
		}
		d.Cases = append(d.Cases, c)
	}
	if len(d.Cases) == 0 {
		return errorf(p.tok.pos, "union %s: expected case, found %s", d.Name, describe(p.tok))
	}
	if p.is("default") {
		if err := p.advance(); err != nil {
			return err
		}
		if err := p.expect(":"); err != nil {
			return err
		}
		if d.Default, err = p.declaration(); err != nil {
			return err
		}
		if err := p.expect(";"); err != nil {
			return err
		}
	}
	return p.expect("}")
}

// declaration parses RFC 4506 §6.3 "declaration".
func (p *parser) declaration() (*Decl, error) {
	decl := &Decl{Pos: p.tok.pos}
	if p.is("void") {
		decl.Kind = DeclVoid
		return decl, p.advance()
	}
	ts, err := p.typeSpec()
	if err != nil {
		return nil, err
	}
	decl.Type = ts
	if p.is("*") {
		if ts.Kind == TOpaque || ts.Kind == TString {
			return nil, errorf(p.tok.pos, "%s cannot be optional; use a typedef", p.prev.text)
		}
		if err := p.advance(); err != nil {
			return nil, err
		}
		decl.Kind = DeclOptional
	}
	if decl.Name, decl.Pos, err = p.ident(); err != nil {
		return nil, err
	}
	if ts.def != nil && ts.def.inline {
		ts.def.field = decl.Name
	}
	if decl.Kind == DeclOptional {
		return decl, nil
	}
	switch {
	case p.is("["):
		if err := p.advance(); err != nil {
			return nil, err
		}
		decl.Kind = DeclFixed
		if decl.Size, err = p.value(); err != nil {
			return nil, err
		}
		if err := p.expect("]"); err != nil {
			return nil, err
		}
	case p.is("<"):
		if err := p.advance(); err != nil {
			return nil, err
		}
		decl.Kind = DeclVar
		if !p.is(">") {
			if decl.Size, err = p.value(); err != nil {
				return nil, err
			}
		}
		if err := p.expect(">"); err != nil {
			return nil, err
		}
	default:
		decl.Kind = DeclScalar
	}
	switch {
	case ts.Kind == TString && decl.Kind != DeclVar:
		return nil, errorf(decl.Pos, "string %s needs a maximum: string %s<N> or <>", decl.Name, decl.Name)
	case ts.Kind == TOpaque && decl.Kind == DeclScalar:
		return nil, errorf(decl.Pos, "opaque %s needs a length: [N] or <N>", decl.Name)
	}
	return decl, nil
}

var builtin = map[string]TypeKind{
	"int": TInt, "hyper": THyper, "float": TFloat, "double": TDouble,
	"quadruple": TQuad, "bool": TBool, "opaque": TOpaque, "string": TString,
}

func (p *parser) typeSpec() (*TypeSpec, error) {
	t := p.tok
	ts := &TypeSpec{Pos: t.pos}
	if t.kind != tIdent {
		return nil, errorf(t.pos, "expected type, found %s", describe(t))
	}
	if t.text == "unsigned" {
		if err := p.advance(); err != nil {
			return nil, err
		}
		ts.Kind = TUint
		switch {
		case p.is("int"):
			return ts, p.advance()
		case p.is("hyper"):
			ts.Kind = TUhyper
			return ts, p.advance()
		}
		return ts, nil // bare "unsigned", as rpcgen accepts
	}
	if k, ok := builtin[t.text]; ok {
		ts.Kind = k
		return ts, p.advance()
	}
	switch t.text {
	case "enum", "struct", "union":
		if err := p.advance(); err != nil {
			return nil, err
		}
		d := &Def{Pos: t.pos, inline: true, parent: p.stack[len(p.stack)-1]}
		p.stack = append(p.stack, d)
		if err := p.body(t.text, d); err != nil {
			return nil, err
		}
		p.stack = p.stack[:len(p.stack)-1]
		d.Src = strings.TrimSpace(p.lx.src[t.off : p.prev.off+1])
		p.lifted = append(p.lifted, d)
		ts.Kind, ts.def = TIdent, d
		return ts, nil
	}
	if keywords[t.text] {
		return nil, errorf(t.pos, "expected type, found %s", describe(t))
	}
	ts.Kind, ts.Name = TIdent, t.text
	return ts, p.advance()
}
