package jaegerhttp

import (
	"testing"
	"time"
)

// TestDedupe: a span sent twice is kept once; a span of the same id and
// start that differs in any field is kept; the rest come ordered by start
// and id.
func TestDedupe(t *testing.T) {
	t0 := time.Unix(1700000000, 0)
	sp := func(id uint64, start time.Duration, name string, tags ...tag) rawSpan {
		return rawSpan{traceID: [16]byte{1}, id: id, name: name, start: t0.Add(start), dur: time.Millisecond, tags: tags,
			proc: procTags{service: "s"}}
	}
	in := []rawSpan{
		sp(3, 2, "c"),
		sp(1, 0, "a", tag{key: "k", s: "v"}),
		sp(2, 1, "b"),
		sp(1, 0, "a", tag{key: "k", s: "v"}), // the same again
		sp(1, 0, "a", tag{key: "k", s: "w"}), // same id and start, another tag
		sp(2, 1, "b"),                        // the same again
		sp(2, 1, "B"),                        // another name
		sp(1, 5, "a", tag{key: "k", s: "v"}), // another start
	}
	out := dedupe(in)
	var got []string
	for _, s := range out {
		v := ""
		if len(s.tags) > 0 {
			v = s.tags[0].s
		}
		got = append(got, s.name+v+s.start.Sub(t0).String())
	}
	want := []string{"av0s", "aw0s", "b1ns", "B1ns", "c2ns", "av5ns"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
