package xdrgen

import "fmt"

// Pos is a position in a .x file, 1-based.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col) }

// DefKind says what a definition declares.
type DefKind int

const (
	DefConst DefKind = iota
	DefTypedef
	DefEnum
	DefStruct
	DefUnion
)

// Def is one top-level definition (or an anonymous type lifted out of one).
type Def struct {
	Kind DefKind
	Name string // XDR name; for lifted inline types a synthesized one
	Pos  Pos
	Doc  []string // comment lines written directly above the definition
	Src  string   // the definition's source text, for the Go doc comment

	Value   *Value        // DefConst
	Decl    *Decl         // DefTypedef
	Members []*EnumMember // DefEnum
	Fields  []*Decl       // DefStruct
	Disc    *Decl         // DefUnion discriminant
	Cases   []*Case       // DefUnion
	Default *Decl         // DefUnion default arm, nil if none

	discKind TypeKind // DefUnion: the discriminant's base type (TIdent for an enum)
	discEnum *Def     // DefUnion: the discriminant's enum, following typedefs

	inline bool   // lifted from an anonymous type specifier
	parent *Def   // inline: the definition it appeared in
	field  string // inline: the declaration it typed
}

// EnumMember is NAME = value inside an enum body.
type EnumMember struct {
	Name  string
	Pos   Pos
	Value *Value
	val   int64 // resolved
}

// Case is one union arm with its case labels.
type Case struct {
	Values []*Value
	Decl   *Decl
}

// DeclKind is the shape of a declaration (RFC 4506 §6.3).
type DeclKind int

const (
	DeclVoid     DeclKind = iota
	DeclScalar            // T x
	DeclFixed             // T x[n], opaque x[n]
	DeclVar               // T x<m>, opaque x<m>, string x<m>
	DeclOptional          // T *x
)

// Decl is a declaration inside a struct, union or typedef.
type Decl struct {
	Kind DeclKind
	Name string
	Pos  Pos
	Type *TypeSpec
	Size *Value // DeclFixed: length; DeclVar: maximum, nil if unbounded

	min     int // fewest wire bytes the declaration takes
	elemMin int // DeclVar arrays: fewest wire bytes per element; DeclOptional: of the value
}

// TypeKind is a type specifier's base type.
type TypeKind int

const (
	TInt TypeKind = iota
	TUint
	THyper
	TUhyper
	TFloat
	TDouble
	TQuad
	TBool
	TOpaque
	TString
	TIdent // a named type; Name holds it
)

// TypeSpec is a type specifier.
type TypeSpec struct {
	Kind TypeKind
	Name string // TIdent
	Pos  Pos
	def  *Def // resolved TIdent
}

// Value is a constant or an identifier naming one.
type Value struct {
	Pos   Pos
	Ident string // empty for a literal
	Lit   int64
	val   int64 // resolved
}

// PassLine is a line that began with % in a .x file: its text, without
// the %, is copied into the generated Go source as it is.
type PassLine struct {
	Pos  Pos
	Text string
}

// Spec is everything parsed from one or more .x files.
type Spec struct {
	Defs []*Def
	Pass []PassLine // %-lines in input order

	checked bool // Check succeeded and nothing was parsed since
}
