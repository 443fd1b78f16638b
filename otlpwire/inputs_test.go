package otlpwire_test

import (
	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func init() {
	otlpwire.AllocInputs = func(s otlpwire.Signal) [][]byte {
		return [][]byte{
			fixture(s),
			synth.RealisticFixture(s, synth.Descending),
			synth.Generate(s, synth.Config{Seed: 7, Resources: 3, ScopesPerResource: 2, RecordsPerScope: 200}),
		}
	}
}
