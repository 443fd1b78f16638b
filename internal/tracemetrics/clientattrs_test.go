package tracemetrics

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// TestClientAttrs: clientAttrs' one pass over a client span's attributes
// gives what a lookup of each key gives (db.name; the first peer
// attribute, in their order, with a scalar value), on random attribute
// lists with repeated keys, keys in any order and non-scalar values.
func TestClientAttrs(t *testing.T) {
	g, err := New(DefaultConfig(), t0)
	if err != nil {
		t.Fatal(err)
	}
	keys := []string{"db.name", "db.system", "peer.service", "http.route", "db.statement"}
	values := [][]byte{
		protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("orders")),
		protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("pay")),
		protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.VarintType), 42),
		protowire.AppendVarint(protowire.AppendTag(nil, 2, protowire.VarintType), 1),
		protowire.AppendBytes(protowire.AppendTag(nil, 5, protowire.BytesType), nil), // an empty array
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		var res []byte
		for range rng.IntN(6) {
			kv := keyValue(keys[rng.IntN(len(keys))], values[rng.IntN(len(values))])
			res = protowire.AppendBytes(protowire.AppendTag(res, 1, protowire.BytesType), kv)
		}
		attrs, err := otlpwire.Resource(res).Attributes()
		if err != nil {
			t.Fatal(err)
		}
		db, hasDB, peer, hasPeer := g.clientAttrs(attrs)
		wantDB, wantHasDB := lookup(attrs, "db.name")
		var wantPeer []byte
		wantHasPeer := false
		for _, p := range g.cfg.VirtualNodePeerAttributes {
			if v, ok := lookup(attrs, p); ok {
				wantPeer, wantHasPeer = v, true
				break
			}
		}
		if !bytes.Equal(db, wantDB) || hasDB != wantHasDB || !bytes.Equal(peer, wantPeer) || hasPeer != wantHasPeer {
			t.Fatalf("attributes %x: db %q %v, peer %q %v; the lookups give db %q %v, peer %q %v",
				res, db, hasDB, peer, hasPeer, wantDB, wantHasDB, wantPeer, wantHasPeer)
		}
	}
}
