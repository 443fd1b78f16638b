package serve

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
)

// envRef matches what the config file expands, as the OpenTelemetry
// Collector's configuration does: ${env:NAME}, ${env:NAME:-default}, and
// $$ for a literal $.
var envRef = regexp.MustCompile(`\$\$|\$\{env:([A-Za-z_][A-Za-z0-9_]*)(:-[^}]*)?\}`)

// expandEnv replaces the environment references in every scalar value
// (not in keys) under n. A variable that is not set expands to its default,
// or to "" (the Collector's rule), and is listed in unset. A plain scalar
// that changed is typed again from its new text, so ${env:PORT} can fill
// an integer.
func expandEnv(n *yaml.Node, unset *[]string) {
	switch n.Kind {
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "$") {
			return
		}
		v := envRef.ReplaceAllStringFunc(n.Value, func(ref string) string {
			if ref == "$$" {
				return "$"
			}
			m := envRef.FindStringSubmatch(ref)
			if val, ok := os.LookupEnv(m[1]); ok {
				return val
			}
			if m[2] != "" {
				return m[2][2:]
			}
			*unset = append(*unset, fmt.Sprintf("line %d: ${env:%s} is not set; it expands to \"\"", n.Line, m[1]))
			return ""
		})
		if v != n.Value {
			n.Value = v
			if n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 {
				n.Tag = "" // resolve the type from the new text
			}
		}
	case yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			expandEnv(n.Content[i], unset)
		}
	default:
		for _, c := range n.Content {
			expandEnv(c, unset)
		}
	}
}

// yamlUnmarshaler is implemented by the types that decode themselves
// (ByteSize); their keys are not checked.
var yamlUnmarshaler = reflect.TypeFor[yaml.Unmarshaler]()

// checkKeys reports the first key of the mapping n that no field of t
// (a struct with yaml tags) has, as "line 12: unknown key
// \"otlp.grpc.lisen\"", naming the keys allowed there.
func checkKeys(n *yaml.Node, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(yamlUnmarshaler) || t.Implements(yamlUnmarshaler) {
		return nil
	}
	switch {
	case t.Kind() == reflect.Struct && n.Kind != yaml.MappingNode && n.Kind != yaml.DocumentNode && n.Tag != "!!null":
		name := strings.TrimSuffix(path, ".")
		if name == "" {
			name = "the document"
		}
		return fmt.Errorf("line %d: %s must be a mapping of keys", n.Line, name)
	case (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t.Elem().Kind() == reflect.Struct &&
		n.Kind != yaml.SequenceNode && n.Tag != "!!null":
		return fmt.Errorf("line %d: %s must be a list", n.Line, strings.TrimSuffix(path, "."))
	case n.Kind == yaml.DocumentNode:
		for _, c := range n.Content {
			if err := checkKeys(c, t, path); err != nil {
				return err
			}
		}
	case n.Kind == yaml.MappingNode && t.Kind() == reflect.Struct:
		fields := map[string]reflect.Type{}
		var names []string
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			fields[name] = f.Type
			names = append(names, name)
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			key := path + k.Value
			ft, ok := fields[k.Value]
			if !ok {
				return fmt.Errorf("line %d: unknown key %q (known here: %s)", k.Line, key, strings.Join(names, ", "))
			}
			if err := checkKeys(n.Content[i+1], ft, key+"."); err != nil {
				return err
			}
		}
	case n.Kind == yaml.SequenceNode && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for _, c := range n.Content {
			if err := checkKeys(c, t.Elem(), path); err != nil {
				return err
			}
		}
	}
	return nil
}

// decodeConfig overlays the YAML document b on c: environment references
// expanded, unknown keys refused with their line. It returns the
// references to unset variables.
func decodeConfig(b []byte, c *Config) (unset []string, err error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 { // empty file
		return nil, nil
	}
	expandEnv(&doc, &unset)
	if err := checkKeys(&doc, reflect.TypeFor[Config](), ""); err != nil {
		return nil, err
	}
	if err := doc.Decode(c); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			return nil, errors.New(strings.Join(te.Errors, "; "))
		}
		return nil, err
	}
	return unset, nil
}
