// Package xdrgen parses the RFC 4506 §6 XDR language and generates Go code
// that uses package github.com/wirehouse/wirehouse/xdr. cmd/xdrgen is its
// command-line front end.
//
// Input: const, typedef, enum, struct and union definitions (with default
// arms and anonymous inline enum/struct/union types), every declaration
// form (T x, T x[n], T x<m>, T x<>, opaque, string, T *x, void), decimal,
// hex and octal constants, TRUE/FALSE, bare "unsigned" as in rpcgen,
// comments (// and /* */) and %-lines, which are copied into the output.
// RPC "program" definitions (RFC 5531) are not accepted.
//
// Output, per definition, in input order: the Go type (XDR source quoted in
// its doc comment, comments above it kept), and for every non-alias type
// AppendXDR, DecodeXDR, SizeXDR, MarshalBinary and UnmarshalBinary; enums
// get constants, Valid and String; unions get one New<Union><Case>
// constructor per case label (plus New<Union>Default) and a Get<Arm>
// accessor per arm. Union arms whose type is a struct, a union or a
// fixed-length array (directly or through typedefs) are pointer fields, so
// that a union's Go size is a few words per arm: decoding hostile input (say
// an array of void elements) then allocates at most a small constant
// multiple of the input's size for every generated type. Structs, unions
// and typedefs also get unexported appendXDR and sizeXDR methods carrying
// the nesting depth; structs and unions count one level each, like
// xdr.Decoder.Enter, and encoding fails with xdr.ErrDepth beyond
// xdr.DefaultMaxDepth, which stops cyclic values.
//
// Names: types and fields become exported CamelCase
// (file_kind -> FileKind); constants and enum members only have their
// first letter upper-cased. Anonymous types are named after where they
// appear (outer_field). typedefs of another named type or of optional
// data become Go aliases.
//
// Checks, reported as file:line:col: syntax, undeclared or redeclared
// identifiers, sizes that are not constants or out of range, discriminants
// that are not int, unsigned int, bool or enum, case values that are
// duplicated or not members of the discriminant's enum, types that contain
// themselves without * or <>, typedef cycles, arrays of zero-size
// elements, types whose smallest encoding is over 4 GiB, sources that are
// not UTF-8 text (or hold NUL bytes), %-lines that do not parse as
// top-level Go on their own, and XDR names that collide once mapped to Go.
// FuzzCompile holds the compiler to that: any input gets either Go that
// parses or an error with its position.
//
// Output is gofmt'd and depends only on the input.
package xdrgen
