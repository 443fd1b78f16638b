package jaegerstorage

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// FuzzRequests: any bytes as a GetTracesRequest or a FindTracesRequest
// are read or refused with an error, never a panic.
func FuzzRequests(f *testing.F) {
	var q, ts []byte
	ts = protowire.AppendTag(ts, 1, protowire.VarintType)
	ts = protowire.AppendVarint(ts, 1764000000)
	q = protowire.AppendTag(q, 1, protowire.BytesType)
	q = protowire.AppendBytes(q, make([]byte, 16))
	q = protowire.AppendTag(q, 2, protowire.BytesType)
	q = protowire.AppendBytes(q, ts)
	var get []byte
	get = protowire.AppendTag(get, 1, protowire.BytesType)
	get = protowire.AppendBytes(get, q)
	f.Add(get)
	var kv, av, params, find []byte
	av = protowire.AppendTag(av, 1, protowire.BytesType)
	av = protowire.AppendString(av, "true")
	kv = protowire.AppendTag(kv, 1, protowire.BytesType)
	kv = protowire.AppendString(kv, "error")
	kv = protowire.AppendTag(kv, 2, protowire.BytesType)
	kv = protowire.AppendBytes(kv, av)
	params = protowire.AppendTag(params, 1, protowire.BytesType)
	params = protowire.AppendString(params, "checkout")
	params = protowire.AppendTag(params, 3, protowire.BytesType)
	params = protowire.AppendBytes(params, kv)
	params = protowire.AppendTag(params, 6, protowire.BytesType)
	params = protowire.AppendBytes(params, ts)
	params = protowire.AppendTag(params, 8, protowire.VarintType)
	params = protowire.AppendVarint(params, 20)
	find = protowire.AppendTag(find, 1, protowire.BytesType)
	find = protowire.AppendBytes(find, params)
	f.Add(find)
	f.Fuzz(func(t *testing.T, b []byte) {
		traceQueries(b)
		query(b)
	})
}
