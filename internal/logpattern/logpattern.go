// Package logpattern mines log patterns: it groups lines that differ only
// in their variable parts (ids, numbers, durations) under one pattern, the
// line's words with <_> in place of the parts that vary, as Loki's
// patterns API answers them (the <_> of LogQL's pattern parser).
//
// The miner is Drain's idea (He, Zhu, Zheng and Lyu, "Drain: An Online Log
// Parsing Approach with Fixed Depth Tree", ICWS 2017), written here from
// the paper: a line is split into words at white space; lines of the same
// number of words and the same first words (those with a digit count as
// <_>) meet in one group; in it, a line joins the pattern it shares the
// most words with, if they are at least Similarity of its words, and the
// pattern's words that differ from the line's become <_>; else it starts a
// pattern of its own, its words with a digit (or longer than 128 bytes)
// <_> from the start. Groups hold at most MaxPatterns patterns in all; the
// lines that would start more are counted (Dropped), not kept.
package logpattern

import (
	"bytes"
	"slices"
	"strings"
)

// Wildcard is a pattern's variable word.
const Wildcard = "<_>"

// maxWordBytes is the longest word a pattern keeps as it is; a longer one
// (a blob, a token) is <_>, so patterns hold a bounded size.
const maxWordBytes = 128

// Config sets a Miner. Start from DefaultConfig.
type Config struct {
	// Similarity is the share of its words a line must share with a
	// pattern to join it, in (0, 1].
	Similarity float64
	// Depth is how many first words (besides the word count) route a line
	// to its group.
	Depth int
	// MaxPatterns bounds the patterns kept.
	MaxPatterns int
	// MaxWords bounds the words of a line read; the rest of a longer line
	// is its last word.
	MaxWords int
}

// DefaultConfig returns a similarity of 0.5, a depth of 1 first word,
// 1,000 patterns and lines of up to 64 words.
func DefaultConfig() Config {
	return Config{Similarity: 0.5, Depth: 1, MaxPatterns: 1000, MaxWords: 64}
}

// Miner groups lines into patterns. Not safe for concurrent use.
type Miner struct {
	cfg      Config
	groups   map[string][]*Pattern
	patterns []*Pattern
	words    [][]byte
	key      []byte
	// Dropped counts the lines that would have started a pattern past
	// MaxPatterns.
	Dropped int
}

// Pattern is a pattern and what the miner counted of it.
type Pattern struct {
	words []string
	// Count is the lines it holds.
	Count int64
	// ID is its place in the order patterns were started.
	ID int
}

// String is the pattern's words joined by spaces.
func (p *Pattern) String() string { return strings.Join(p.words, " ") }

// New returns a Miner of cfg (invalid values are the defaults').
func New(cfg Config) *Miner {
	d := DefaultConfig()
	if cfg.Similarity <= 0 || cfg.Similarity > 1 {
		cfg.Similarity = d.Similarity
	}
	if cfg.Depth <= 0 {
		cfg.Depth = d.Depth
	}
	if cfg.MaxPatterns <= 0 {
		cfg.MaxPatterns = d.MaxPatterns
	}
	if cfg.MaxWords <= 0 {
		cfg.MaxWords = d.MaxWords
	}
	return &Miner{cfg: cfg, groups: map[string][]*Pattern{}}
}

// Add puts line in its pattern and returns it (nil if it would have
// started one past MaxPatterns). The miner keeps no reference to line.
func (m *Miner) Add(line []byte) *Pattern {
	m.words = split(m.words[:0], line, m.cfg.MaxWords)
	if len(m.words) == 0 {
		m.words = append(m.words, nil) // an empty line is a pattern of its own
	}
	m.key = m.groupKey(m.key[:0])
	group := m.groups[string(m.key)]
	var best *Pattern
	bestSim, bestWild := -1.0, 0
	for _, p := range group {
		same, wild := 0, 0
		for i, w := range p.words {
			switch {
			case w == Wildcard:
				wild++
			case w == string(m.words[i]):
				same++
			}
		}
		sim := float64(same) / float64(len(m.words))
		if sim > bestSim || sim == bestSim && wild > bestWild {
			best, bestSim, bestWild = p, sim, wild
		}
	}
	if best != nil && bestSim >= m.cfg.Similarity {
		for i, w := range best.words {
			if w != Wildcard && w != string(m.words[i]) {
				best.words[i] = Wildcard
			}
		}
		best.Count++
		return best
	}
	if len(m.patterns) >= m.cfg.MaxPatterns {
		m.Dropped++
		return nil
	}
	p := &Pattern{words: make([]string, len(m.words)), Count: 1, ID: len(m.patterns)}
	for i, w := range m.words {
		if hasDigit(w) || len(w) > maxWordBytes {
			p.words[i] = Wildcard
		} else {
			p.words[i] = string(w)
		}
	}
	m.groups[string(m.key)] = append(group, p)
	m.patterns = append(m.patterns, p)
	return p
}

// Patterns returns the patterns, in the order they were started. Patterns
// that came to read alike (two of a group whose words all became <_> at
// the same places) are not merged: their counts are each their own.
func (m *Miner) Patterns() []*Pattern { return slices.Clone(m.patterns) }

// groupKey appends the key of m.words' group: the word count and the
// first Depth words, those with a digit as <_>.
func (m *Miner) groupKey(dst []byte) []byte {
	dst = append(dst, byte(len(m.words)), byte(len(m.words)>>8), 0)
	for i := 0; i < len(m.words) && i < m.cfg.Depth; i++ {
		if w := m.words[i]; hasDigit(w) {
			dst = append(dst, Wildcard...)
		} else {
			dst = append(dst, w...)
		}
		dst = append(dst, 0)
	}
	return dst
}

// split appends the words of line, at most max (the last holding the
// rest of the line, its inner spaces kept).
func split(dst [][]byte, line []byte, max int) [][]byte {
	for len(line) > 0 {
		line = bytes.TrimLeft(line, " \t\r\n")
		if len(line) == 0 {
			break
		}
		if len(dst) == max-1 {
			return append(dst, bytes.TrimRight(line, " \t\r\n"))
		}
		i := bytes.IndexAny(line, " \t\r\n")
		if i < 0 {
			i = len(line)
		}
		dst = append(dst, line[:i])
		line = line[i:]
	}
	return dst
}

func hasDigit(w []byte) bool {
	for _, c := range w {
		if c >= '0' && c <= '9' {
			return true
		}
	}
	return false
}
