package xdr_test

// Benchmarks of generated code (structs and unions) against the
// reflection-based baselines; see bench_test.go for how to run them.

import (
	"bytes"
	"testing"

	dave "github.com/davecgh/go-xdr/xdr2"
	stellar "github.com/stellar/go-xdr/xdr3"

	"github.com/wirehouse/wirehouse/xdr"
	"github.com/wirehouse/wirehouse/xdr/internal/xdrtest"
)

// Mirrors of the generated types for the reflection libraries.
type bPerson struct {
	Name    string
	Age     uint32
	Email   string
	Active  bool
	Created int64
}

type bConfig struct {
	Key      string
	Value    string
	Version  uint64
	Enabled  bool
	Ratio    float64
	Tags     []string
	Checksum [16]byte
}

// sCompany is Company for stellar, which encodes *T as optional data.
type sCompany struct {
	Name      string
	Employees []bPerson
	Settings  []bConfig
	Ceo       *bPerson
}

// dCompany is Company for davecgh, which has no optional data; a 0/1
// element array encodes the same bytes.
type dCompany struct {
	Name      string
	Employees []bPerson
	Settings  []bConfig
	Ceo       []bPerson
}

// sResult is the Result union for stellar (davecgh has no unions).
type sResult struct {
	Code int32
	Data *[]byte `xdrmaxsize:"1024"`
}

func (sResult) SwitchFieldName() string { return "Code" }
func (sResult) ArmForSwitch(sw int32) (string, bool) {
	switch sw {
	case 0:
		return "Data", true
	case 1:
		return "", true
	}
	return "-", false
}

func person() xdrtest.Person {
	return xdrtest.Person{Name: "Alice Johnson", Age: 34, Email: "alice@example.com", Active: true, Created: 1700000000}
}

func bperson() bPerson {
	return bPerson{Name: "Alice Johnson", Age: 34, Email: "alice@example.com", Active: true, Created: 1700000000}
}

func config() xdrtest.Config {
	return xdrtest.Config{Key: "retention.days", Value: "30", Version: 7, Enabled: true, Ratio: 0.25,
		Tags: []xdrtest.Tag{"prod", "eu-west"}, Checksum: [16]byte{0xca, 0xfe}}
}

func bconfig() bConfig {
	return bConfig{Key: "retention.days", Value: "30", Version: 7, Enabled: true, Ratio: 0.25,
		Tags: []string{"prod", "eu-west"}, Checksum: [16]byte{0xca, 0xfe}}
}

func company() xdrtest.Company {
	ceo := person()
	c := xdrtest.Company{Name: "Wirehouse Inc", Ceo: &ceo}
	for i := 0; i < 5; i++ {
		c.Employees = append(c.Employees, person())
	}
	c.Settings = []xdrtest.Config{config(), config()}
	return c
}

func scompany() sCompany {
	ceo := bperson()
	c := sCompany{Name: "Wirehouse Inc", Ceo: &ceo}
	for i := 0; i < 5; i++ {
		c.Employees = append(c.Employees, bperson())
	}
	c.Settings = []bConfig{bconfig(), bconfig()}
	return c
}

func dcompany() dCompany {
	s := scompany()
	return dCompany{Name: s.Name, Employees: s.Employees, Settings: s.Settings, Ceo: []bPerson{*s.Ceo}}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}

// genValue is what every generated type implements.
type genValue interface {
	xdr.Marshaler
	xdr.Unmarshaler
	UnmarshalBinary([]byte) error
	MarshalBinary() ([]byte, error)
}

// structCase is one generated type with its baseline mirrors.
type structCase struct {
	name    string
	gen     func() genValue
	dave    func() any // pointer to a fresh mirror; nil if unsupported
	stellar func() any
}

func structCases() []structCase {
	return []structCase{
		{"Person", func() genValue { p := person(); return &p },
			func() any { p := bperson(); return &p }, func() any { p := bperson(); return &p }},
		{"Config", func() genValue { c := config(); return &c },
			func() any { c := bconfig(); return &c }, func() any { c := bconfig(); return &c }},
		{"Company", func() genValue { c := company(); return &c },
			func() any { c := dcompany(); return &c }, func() any { c := scompany(); return &c }},
	}
}

// TestBaselines checks that all impls produce identical bytes, so the
// benchmarks compare equal work.
func TestBaselines(t *testing.T) {
	for _, c := range structCases() {
		t.Run(c.name, func(t *testing.T) {
			want := must(c.gen().MarshalBinary())
			var db, sb bytes.Buffer
			if _, err := dave.Marshal(&db, c.dave()); err != nil {
				t.Fatal(err)
			}
			if _, err := stellar.Marshal(&sb, c.stellar()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(db.Bytes(), want) || !bytes.Equal(sb.Bytes(), want) {
				t.Errorf("bytes differ\n ours %x\n dave %x\n stel %x", want, db.Bytes(), sb.Bytes())
			}
		})
	}
	r := xdrtest.NewResultResultOk(make([]byte, 100))
	var sb bytes.Buffer
	data := make([]byte, 100)
	if _, err := stellar.Marshal(&sb, &sResult{Code: 0, Data: &data}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(sb.Bytes(), must(r.MarshalBinary())) {
		t.Error("Result bytes differ")
	}
}

func benchStructs(b *testing.B) {
	for _, c := range structCases() {
		v := c.gen()
		in := must(v.MarshalBinary())
		buf := make([]byte, 0, 2*len(in))
		pre := "/type=" + c.name + "/impl="
		run(b, "op=marshal"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				buf, _ = v.AppendXDR(buf[:0])
			}
		})
		run(b, "op=marshal_new"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				sinkBytes, _ = v.MarshalBinary()
			}
		})
		var out bytes.Buffer
		out.Grow(2 * len(in))
		dv, sv := c.dave(), c.stellar()
		// Streaming, as the baselines below do: xdr.Writer over the same
		// reused bytes.Buffer, flushed per value.
		w := xdr.NewWriter(&out)
		run(b, "op=marshal_stream"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				w.Reset(&out)
				w.Encode(v)
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
		run(b, "op=marshal"+pre+"davecgh", len(in), func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				if _, err := dave.Marshal(&out, dv); err != nil {
					b.Fatal(err)
				}
			}
		})
		run(b, "op=marshal"+pre+"stellar", len(in), func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				if _, err := stellar.Marshal(&out, sv); err != nil {
					b.Fatal(err)
				}
			}
		})
		target := c.gen()
		run(b, "op=unmarshal"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				if err := target.UnmarshalBinary(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		run(b, "op=unmarshal_new"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				fresh := c.gen()
				if err := fresh.UnmarshalBinary(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		r := bytes.NewReader(in)
		dt, st := c.dave(), c.stellar()
		run(b, "op=unmarshal"+pre+"davecgh", len(in), func(b *testing.B) {
			for b.Loop() {
				r.Reset(in)
				if _, err := dave.Unmarshal(r, dt); err != nil {
					b.Fatal(err)
				}
			}
		})
		run(b, "op=unmarshal"+pre+"stellar", len(in), func(b *testing.B) {
			for b.Loop() {
				r.Reset(in)
				if _, err := stellar.Unmarshal(r, st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

type unionValue interface {
	xdr.Marshaler
	UnmarshalBinary([]byte) error
}

func benchUnions(b *testing.B) {
	payload := bytes.Repeat([]byte{1}, 64)
	ok, errRes := xdrtest.NewResultResultOk(payload), xdrtest.NewResultResultError()
	text, ping := xdrtest.NewMessageMsgText("hello, union"), xdrtest.NewMessageMsgPing()
	read := xdrtest.NewOperationOpRead(xdrtest.ReadArgs{Path: "/var/log/app.log", Offset: 4096, Count: 512})
	del := xdrtest.NewOperationOpDelete("/tmp/x")
	sync := xdrtest.NewOperationDefault(xdrtest.OP_SYNC)
	cases := []struct {
		typ, arm string
		v, t     unionValue
	}{
		{"Result", "ok_64B", &ok, new(xdrtest.Result)}, {"Result", "error_void", &errRes, new(xdrtest.Result)},
		{"Message", "text", &text, new(xdrtest.Message)}, {"Message", "ping_void", &ping, new(xdrtest.Message)},
		{"Operation", "read", &read, new(xdrtest.Operation)}, {"Operation", "delete", &del, new(xdrtest.Operation)},
		{"Operation", "default_void", &sync, new(xdrtest.Operation)},
	}
	for _, c := range cases {
		in := must(xdr.Marshal(c.v))
		buf := make([]byte, 0, 2*len(in))
		pre := "/type=" + c.typ + "/arm=" + c.arm + "/impl="
		run(b, "op=marshal"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				buf, _ = c.v.AppendXDR(buf[:0])
			}
		})
		run(b, "op=unmarshal"+pre+"wirehouse", len(in), func(b *testing.B) {
			for b.Loop() {
				if err := c.t.UnmarshalBinary(in); err != nil {
					b.Fatal(err)
				}
			}
		})
		if c.typ != "Result" {
			continue
		}
		var sv sResult
		if c.arm == "ok_64B" {
			sv.Data = &payload
		} else {
			sv.Code = 1
		}
		var out bytes.Buffer
		run(b, "op=marshal"+pre+"stellar", len(in), func(b *testing.B) {
			for b.Loop() {
				out.Reset()
				if _, err := stellar.Marshal(&out, &sv); err != nil {
					b.Fatal(err)
				}
			}
		})
		r := bytes.NewReader(in)
		var st sResult
		run(b, "op=unmarshal"+pre+"stellar", len(in), func(b *testing.B) {
			for b.Loop() {
				r.Reset(in)
				if _, err := stellar.Unmarshal(r, &st); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
