package eval

import (
	"bytes"
	"fmt"
	"regexp"
	"text/template"

	"github.com/wirehouse/wirehouse/internal/logql"
)

// Line stages: | line_format "{{template}}" (template.go) and
// | decolorize.

// compileLineFormat compiles | line_format: the template's output is the
// line; one that fails keeps the line with __error__ set.
func compileLineFormat(s *logql.LineFormat) (stage, error) {
	tmpl, err := template.New("line_format").Funcs(templateFuncs).Option("missingkey=zero").Parse(s.Template)
	if err != nil {
		return nil, fmt.Errorf("line_format: %w", err)
	}
	return func(e *entry) bool {
		var b bytes.Buffer
		if err := tmpl.Execute(&b, templateData(e)); err != nil {
			e.set("__error__", "TemplateFormatErr")
			e.set("__error_details__", err.Error())
			return true
		}
		e.line = b.Bytes()
		return true
	}, nil
}

// compileDecolorize compiles | decolorize: the line without its ANSI
// escape sequences.
func compileDecolorize(*logql.Decolorize) (stage, error) {
	return func(e *entry) bool { e.line = ansi.ReplaceAll(e.line, nil); return true }, nil
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*[A-Za-z]")
