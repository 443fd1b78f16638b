// Command spannames sends OTLP/HTTP traces requests whose spans all have
// distinct names (GET /item/<n>), for the trace metrics' cardinality
// bound (scripts/trace-metrics-cardinality.sh): -requests requests of
// -spans server spans each, from one service. It exits 1 on a request
// not answered 200.
package main

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:4318/v1/traces", "OTLP/HTTP traces endpoint")
	requests := flag.Int("requests", 100, "requests to send")
	spans := flag.Int("spans", 1000, "spans a request, each with a new name")
	flag.Parse()
	n := 0
	for r := range *requests {
		body := request(r, *spans, &n)
		resp, err := http.Post(*endpoint, "application/x-protobuf", bytes.NewReader(body))
		if err != nil {
			fmt.Fprintln(os.Stderr, "spannames:", err)
			os.Exit(1)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintln(os.Stderr, "spannames:", resp.Status)
			os.Exit(1)
		}
	}
	fmt.Printf("sent %d spans with distinct names\n", n)
}

// request is an ExportTraceServiceRequest of one resource (service.name
// api) and one scope with spans spans named GET /item/<*n>, counting n.
func request(r, spans int, n *int) []byte {
	msg := func(dst []byte, num protowire.Number, b []byte) []byte {
		return protowire.AppendBytes(protowire.AppendTag(dst, num, protowire.BytesType), b)
	}
	var kv, av, res []byte
	av = protowire.AppendString(protowire.AppendTag(av, 1, protowire.BytesType), "api")
	kv = protowire.AppendString(protowire.AppendTag(kv, 1, protowire.BytesType), "service.name")
	kv = msg(kv, 2, av)
	res = msg(res, 1, kv)
	var ss []byte
	now := uint64(time.Now().UnixNano())
	for i := range spans {
		var id [16]byte
		binary.BigEndian.PutUint64(id[:8], uint64(r)+1)
		binary.BigEndian.PutUint64(id[8:], uint64(i)+1)
		var sp []byte
		sp = msg(sp, 1, id[:])
		sp = msg(sp, 2, id[8:])
		sp = protowire.AppendString(protowire.AppendTag(sp, 5, protowire.BytesType), fmt.Sprintf("GET /item/%d", *n))
		sp = protowire.AppendVarint(protowire.AppendTag(sp, 6, protowire.VarintType), 2) // SPAN_KIND_SERVER
		sp = protowire.AppendFixed64(protowire.AppendTag(sp, 7, protowire.Fixed64Type), now)
		sp = protowire.AppendFixed64(protowire.AppendTag(sp, 8, protowire.Fixed64Type), now+uint64(i%50)*1e6)
		ss = msg(ss, 2, sp)
		*n++
	}
	var rs []byte
	rs = msg(rs, 1, res)
	rs = msg(rs, 2, ss)
	return msg(nil, 1, rs)
}
