package serve

import (
	"fmt"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployConfig: deploy/wirehouse.yaml loads, holds exactly the
// embedded defaults, and names every key Config has, so that it stays the
// complete commented reference.
func TestDeployConfig(t *testing.T) {
	const path = "../../deploy/wirehouse.yaml"
	c := DefaultConfig()
	if err := c.LoadFile(path); err != nil {
		t.Fatal(err)
	}
	// Compared as printed: the file's empty lists are empty slices, the
	// defaults' nil ones.
	if got, want := fmt.Sprintf("%+v", c), fmt.Sprintf("%+v", DefaultConfig()); got != want {
		t.Errorf("the example differs from the defaults:\n got %s\nwant %s", got, want)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	var missing []string
	var walk func(n *yaml.Node, t reflect.Type, path string)
	walk = func(n *yaml.Node, t reflect.Type, path string) {
		if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(yamlUnmarshaler) {
			return
		}
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" || !f.IsExported() {
				continue
			}
			var v *yaml.Node
			if n != nil && n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == name {
						v = n.Content[i+1]
					}
				}
			}
			if v == nil {
				missing = append(missing, path+name)
			}
			walk(v, f.Type, path+name+".")
		}
	}
	walk(doc.Content[0], reflect.TypeFor[Config](), "")
	if len(missing) > 0 {
		t.Errorf("deploy/wirehouse.yaml lacks %s", strings.Join(missing, ", "))
	}
}

// TestDeployRules: the example rule files in deploy/rules load into
// serve's ruler (PromQL and LogQL), and promtool (Prometheus' own
// checker) accepts the Prometheus one.
func TestDeployRules(t *testing.T) {
	cfg := testConfig(t)
	cfg.Rules.Files = []string{"../../deploy/rules/example.rules.yml"}
	cfg.Rules.LogQLFiles = []string{"../../deploy/rules/example.logql.yml"}
	s := startServer(t, cfg)
	if g := ruleGroups(t, s.Addrs(), "/api/v1/rules"); len(g["http-server"]) != 5 {
		t.Errorf("the Prometheus example's rules: %v", g)
	}
	if g := ruleGroups(t, s.Addrs(), "/prometheus/api/v1/rules"); len(g["log-errors"]) != 2 {
		t.Errorf("the LogQL example's rules: %v", g)
	}
	promtool := os.Getenv("WIREHOUSE_PROMTOOL")
	if promtool == "" {
		t.Skip("WIREHOUSE_PROMTOOL not set; `make test` installs promtool and sets it")
	}
	if out, err := exec.Command(promtool, "check", "rules", cfg.Rules.Files[0]).CombinedOutput(); err != nil {
		t.Errorf("promtool check rules: %v\n%s", err, out)
	}
}
