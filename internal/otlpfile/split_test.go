package otlpfile

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/wirehouse/wirehouse/internal/synth"
	"github.com/wirehouse/wirehouse/otlpwire"
)

func TestSplitDelimited(t *testing.T) {
	tests := []struct {
		name string
		hex  string
		want []string // hex of each message
		off  int64    // of the error; -1 for none
	}{
		{"no input", "", nil, -1},
		{"empty message", "00000000", []string{""}, -1},
		{"one message", "000000010a", []string{"0a"}, -1},
		{"two messages", "000000010a" + "00000002 0a00", []string{"0a", "0a00"}, -1},
		{"1-byte prefix", "00", nil, 0},
		{"3-byte prefix", "000000", nil, 0},
		{"short prefix after a message", "000000010a" + "000000", []string{"0a"}, 5},
		{"short message", "00000002 0a", nil, 0},
		{"huge length after a message", "000000010a" + "ffffffff 0a", []string{"0a"}, 5},
		{"length past the end", "7fffffff", nil, 0},
		{"two empty messages", "00000000 00000000", []string{"", ""}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b, err := hex.DecodeString(spaceless(tc.hex))
			if err != nil {
				t.Fatal(err)
			}
			reqs, offs, err := SplitDelimited(nil, nil, b)
			if len(reqs) != len(tc.want) || len(offs) != len(tc.want) {
				t.Errorf("%d requests, %d offsets; want %d", len(reqs), len(offs), len(tc.want))
				return
			}
			for i, w := range tc.want {
				if hex.EncodeToString(reqs[i]) != w {
					t.Errorf("request %d = %x, want %s", i, reqs[i], w)
				}
			}
			var e *Error
			switch {
			case tc.off < 0 && err != nil:
				t.Error(err)
			case tc.off >= 0 && (!errors.As(err, &e) || e.Offset != tc.off || !errors.Is(err, ErrLengthPrefix)):
				t.Errorf("err = %v, want ErrLengthPrefix at offset %d", err, tc.off)
			}
		})
	}
}

func TestSplitProto(t *testing.T) {
	req := logsReq(1, 3)
	for first := range 256 {
		b := append([]byte{byte(first)}, req...)
		if got, want := IsDelimited(b), first < 8; got != want {
			t.Errorf("first byte %#02x: IsDelimited = %v", first, got)
		}
	}
	reqs, offs, err := SplitProto(nil, nil, req)
	if err != nil || len(reqs) != 1 || offs[0] != 0 || !bytes.Equal(reqs[0], req) {
		t.Errorf("raw request: %d requests, %v", len(reqs), err)
	}
	reqs, offs, err = SplitProto(reqs[:0], offs[:0], delimited(req, req))
	if err != nil || len(reqs) != 2 || offs[1] != int64(8+len(req)) || !bytes.Equal(reqs[1], req) {
		t.Errorf("delimited requests: %d requests, %v", len(reqs), err)
	}
	// A first request of 128 MiB or more has a length prefix starting at
	// 0x08: it reads as raw, which the lake then refuses (field 1 with
	// wire type 0 where resource_logs is bytes).
	big := binary.BigEndian.AppendUint32(nil, 128<<20)
	if IsDelimited(big) {
		t.Errorf("prefix %x read as delimited", big)
	}
}

func spaceless(s string) string { return string(bytes.ReplaceAll([]byte(s), []byte(" "), nil)) }

// FuzzSplitDelimited splits arbitrary content. It must not panic, and what
// it returns must describe the input exactly: the messages, re-framed, give
// back the input up to the error offset (all of it without error); each
// message aliases the input at its offset, with capacity capped; an error
// is an ErrLengthPrefix at the start of the bytes left over.
//
//	go test -run='^$' -fuzz=FuzzSplitDelimited -fuzztime=3m -fuzzminimizetime=10s ./internal/ingest/
func FuzzSplitDelimited(f *testing.F) {
	// Real requests under 1 KB, so that seeds, even two framed together,
	// stay under 2 KB and the minimizer quick.
	var small [][]byte
	for seed := uint64(0); len(small) < 8 && seed < 200; seed++ {
		for _, s := range []otlpwire.Signal{otlpwire.SignalLogs, otlpwire.SignalTraces} {
			if b := synth.Random(rand.New(rand.NewPCG(seed, 3)), s, synth.Order(seed%2)); len(b) > 0 && len(b) < 1024 {
				small = append(small, b)
			}
		}
	}
	if len(small) < 4 {
		f.Fatalf("only %d small generated requests", len(small))
	}
	for i, b := range small {
		f.Add(delimited(b))
		f.Add(delimited(b, small[(i+1)%len(small)]))
		f.Add(b) // raw: the first byte tells
	}
	one := synth.Logs(synth.Config{Seed: 1, Resources: 1, ScopesPerResource: 1, TotalRecords: 1})
	if len(one) < 2040 {
		f.Add(delimited(one))
	}
	f.Add(delimited(nil, nil))
	f.Add([]byte{0, 0, 0})
	f.Add([]byte{0, 0, 0, 5, 0x0a, 0x03})
	f.Fuzz(func(t *testing.T, b []byte) {
		reqs, offs, err := SplitDelimited(nil, nil, b)
		if len(reqs) != len(offs) {
			t.Fatalf("%d requests, %d offsets", len(reqs), len(offs))
		}
		end := len(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrLengthPrefix) || e.Offset < 0 || e.Offset >= int64(len(b)) {
				t.Fatalf("err = %v, want ErrLengthPrefix inside the input", err)
			}
			end = int(e.Offset)
			if rest := b[end:]; len(rest) >= 4 && int(binary.BigEndian.Uint32(rest)) <= len(rest)-4 {
				t.Fatalf("refused a prefix of %d with %d bytes left", binary.BigEndian.Uint32(rest), len(rest)-4)
			}
		}
		again := delimited(reqs...)
		if !bytes.Equal(again, b[:end]) {
			t.Fatalf("re-framed %d requests give %d bytes, want the %d before the error", len(reqs), len(again), end)
		}
		for i, r := range reqs {
			o := int(offs[i])
			if o < 4 || o+len(r) > len(b) || cap(r) != len(r) || (len(r) > 0 && &r[0] != &b[o]) {
				t.Fatalf("request %d (%d bytes at %d, cap %d) does not alias the input at its offset", i, len(r), o, cap(r))
			}
		}
		// SplitProto agrees for delimited content and takes anything else whole.
		preqs, _, perr := SplitProto(nil, nil, b)
		switch {
		case len(b) == 0:
			if len(preqs) != 0 || perr != nil {
				t.Fatalf("empty content: %d requests, %v", len(preqs), perr)
			}
		case IsDelimited(b):
			if len(preqs) != len(reqs) || (perr == nil) != (err == nil) {
				t.Fatalf("SplitProto: %d requests, %v; SplitDelimited: %d, %v", len(preqs), perr, len(reqs), err)
			}
		default:
			if len(preqs) != 1 || perr != nil || len(preqs[0]) != len(b) {
				t.Fatalf("raw content: %d requests, %v", len(preqs), perr)
			}
		}
	})
}
