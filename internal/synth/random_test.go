package synth

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestRandom(t *testing.T) {
	for _, s := range signals {
		t.Run("signal="+s.String(), func(t *testing.T) {
			records := 0
			seen := map[string]int{}
			for seed := range uint64(500) {
				asc := Random(rand.New(rand.NewPCG(seed, 1)), s, Ascending)
				desc := Random(rand.New(rand.NewPCG(seed, 1)), s, Descending)
				t.Run(fmt.Sprint("seed=", seed), func(t *testing.T) {
					checkOrders(t, s, asc, desc)
				})
				if again := Random(rand.New(rand.NewPCG(seed, 1)), s, Descending); !bytes.Equal(again, desc) {
					t.Fatalf("seed %d: same source state, different bytes", seed)
				}
				_, n, _ := decode(t, s, asc)
				records += n
				if err := checkFieldOrder(asc, requestMessage(s), Ascending, seen); err != nil {
					t.Fatal(err)
				}
			}
			if records < 500 {
				t.Errorf("only %d records in 500 requests", records)
			}
			// Every field of every message the signal uses appears somewhere.
			var missing []string
			for msg, fields := range schema {
				if seen[msg+".1"]+seen[msg+".2"]+seen[msg+".7"] == 0 {
					continue // a message of another signal
				}
				for _, f := range fields {
					if key := fmt.Sprintf("%s.%d", msg, f.num); seen[key] == 0 {
						missing = append(missing, key)
					}
				}
			}
			if seen["unknown"] == 0 {
				missing = append(missing, "unknown")
			}
			slices.Sort(missing)
			if len(missing) > 0 {
				t.Errorf("500 requests never hold %s", strings.Join(missing, ", "))
			}
		})
	}
}
