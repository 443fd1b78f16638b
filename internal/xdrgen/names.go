package xdrgen

import (
	"strconv"
	"strings"
	"unicode"
)

// goName turns an XDR identifier into an exported Go name: parts split on
// underscores, each capitalized; all-caps parts are lowered after their
// first letter (FILE_EXEC -> FileExec, filekind -> Filekind).
func goName(s string) string {
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		r := []rune(part)
		upper := strings.ToUpper(part) == part
		b.WriteRune(unicode.ToUpper(r[0]))
		for _, c := range r[1:] {
			if upper {
				c = unicode.ToLower(c)
			}
			b.WriteRune(c)
		}
	}
	if b.Len() == 0 {
		return "X"
	}
	return b.String()
}

// goConst turns an XDR constant or enum member name into an exported Go
// name, changing only the first letter so FILE_EXEC stays FILE_EXEC.
func goConst(s string) string {
	r := []rune(s)
	r[0] = unicode.ToUpper(r[0])
	return string(r)
}

// labelName names a union case for constructors: the constant's Go name,
// or Case<n> for a literal.
func labelName(v *Value) string {
	if v.Ident != "" {
		return goName(v.Ident)
	}
	if v.val < 0 {
		return "CaseMinus" + strconv.FormatInt(-v.val, 10)
	}
	return "Case" + strconv.FormatInt(v.val, 10)
}
