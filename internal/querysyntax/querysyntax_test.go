package querysyntax

import "testing"

func TestErrorAt(t *testing.T) {
	q := "{a=\"b\"}\n  |= ∑x\nmore"
	for _, c := range []struct{ pos, line, col int }{
		{0, 1, 1}, {3, 1, 4}, {8, 2, 1}, {13, 2, 6}, {16, 2, 7}, // ∑ is 3 bytes, one column
		{-4, 1, 1}, {1000, 3, 5},
	} {
		e := ErrorAt(q, c.pos, "bad %s", "thing")
		if e.Line != c.line || e.Col != c.col || e.Msg != "bad thing" {
			t.Errorf("ErrorAt(%d) = line %d col %d %q, want line %d col %d", c.pos, e.Line, e.Col, e.Msg, c.line, c.col)
		}
	}
	if got := ErrorAt("ab", 1, "x").Error(); got != "parse error at line 1, col 2: x" {
		t.Errorf("Error() = %q", got)
	}
}

func TestUnquote(t *testing.T) {
	for _, c := range []struct {
		in, val string
		n       int
		ok      bool
	}{
		{`"a\"b" rest`, `a"b`, 6, true},
		{"`a\\d` rest", `a\d`, 5, true},
		{"`multi\nline`", "multi\nline", 12, true},
		{`"\u00e9"`, "é", 8, true},
		{`"open`, "", 0, false},
		{"\"new\nline\"", "", 0, false},
		{`"\q"`, "", 0, false},
	} {
		v, n, err := Unquote(c.in)
		if (err == nil) != c.ok || v != c.val || n != c.n {
			t.Errorf("Unquote(%q) = %q, %d, %v; want %q, %d, ok %v", c.in, v, n, err, c.val, c.n, c.ok)
		}
	}
}

func TestOperator(t *testing.T) {
	ops := []string{">>", ">=", ">", "="}
	for in, want := range map[string]string{">>x": ">>", ">= 1": ">=", "> 1": ">", "=": "=", "<": ""} {
		if got := Operator(in, ops); got != want {
			t.Errorf("Operator(%q) = %q, want %q", in, got, want)
		}
	}
}
