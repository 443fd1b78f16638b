package logpattern_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/logpattern"
)

// TestMiner: lines made from four templates with random variable parts
// come back as the four templates with <_> for those parts, each with the
// number of lines made from it; a limit of patterns counts the lines past
// it as dropped.
func TestMiner(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	users := []string{"ann", "bob", "cid", "dee", "eve"}
	templates := []struct {
		pattern string
		make    func() string
	}{
		{"user <_> logged in from <_>", func() string {
			return fmt.Sprintf("user %s logged in from 10.0.%d.%d", users[rnd.IntN(len(users))], rnd.IntN(256), rnd.IntN(256))
		}},
		{"GET <_> OK <_>", func() string { return fmt.Sprintf("GET /api/items/%d OK %dms", rnd.IntN(1000), rnd.IntN(500)) }},
		{"cache miss for key <_>", func() string { return fmt.Sprintf("cache miss for key k%x", rnd.Uint32()) }},
		{"shutting down", func() string { return "shutting down" }},
	}
	m := logpattern.New(logpattern.DefaultConfig())
	want := map[string]int64{}
	for range 2000 {
		tp := templates[rnd.IntN(len(templates))]
		want[tp.pattern]++
		if p := m.Add([]byte(tp.make())); p == nil {
			t.Fatal("a line dropped under the limit")
		}
	}
	got := map[string]int64{}
	for _, p := range m.Patterns() {
		got[p.String()] += p.Count
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("patterns\n got  %v\n want %v", got, want)
	}
	// Two patterns at most: the third template's lines are dropped.
	small := logpattern.New(logpattern.Config{MaxPatterns: 2})
	for i := range 30 {
		small.Add([]byte(templates[i%3].make()))
	}
	if ps := small.Patterns(); len(ps) != 2 || small.Dropped != 10 || ps[0].Count+ps[1].Count != 20 {
		t.Errorf("limited: %d patterns, %d dropped", len(ps), small.Dropped)
	}
	// A huge word is <_>, and a line past MaxWords keeps its rest whole.
	long := logpattern.New(logpattern.Config{MaxWords: 3})
	p := long.Add([]byte("blob " + strings.Repeat("x", 1000) + " a b c"))
	if p.String() != "blob <_> a b c" {
		t.Errorf("long line's pattern %q", p.String())
	}
}

// FuzzMiner: any lines, never a panic; every line is counted in a
// pattern or as dropped.
func FuzzMiner(f *testing.F) {
	f.Add([]byte("user ann logged in\nuser bob logged in\n\n  GET /a 200\tok"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := logpattern.New(logpattern.Config{MaxPatterns: 8, MaxWords: 6})
		lines := strings.Split(string(b), "\n")
		for _, l := range lines {
			m.Add([]byte(l))
		}
		var n int64
		for _, p := range m.Patterns() {
			n += p.Count
		}
		if n+int64(m.Dropped) != int64(len(lines)) {
			t.Fatalf("%d lines, %d in patterns, %d dropped", len(lines), n, m.Dropped)
		}
	})
}
