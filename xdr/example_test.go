package xdr_test

import (
	"errors"
	"fmt"

	"github.com/wirehouse/wirehouse/xdr"
)

func Example() {
	// Encode a struct { string name<16>; unsigned int age; bool admin; }.
	buf := make([]byte, 0, 64)
	buf, err := xdr.AppendString(buf, "ada", 16)
	if err != nil {
		panic(err)
	}
	buf = xdr.AppendUint32(buf, 36)
	buf = xdr.AppendBool(buf, true)
	fmt.Printf("% x\n", buf)

	d := xdr.NewDecoder(buf)
	name, _ := d.DecodeStringView(16) // aliases buf
	age, _ := d.DecodeUint32()
	admin, _ := d.DecodeBool()
	fmt.Println(string(name), age, admin, d.Done())
	// Output:
	// 00 00 00 03 61 64 61 00 00 00 00 24 00 00 00 01
	// ada 36 true <nil>
}

func ExampleError() {
	d := xdr.NewDecoder([]byte{0, 0, 0, 1, 0, 0, 0, 2})
	d.DecodeBool()
	_, err := d.DecodeBool()
	var e *xdr.Error
	fmt.Println(errors.Is(err, xdr.ErrBool), errors.As(err, &e) && e.Offset == 4)
	fmt.Println(err)
	// Output:
	// true true
	// decode bool at offset 4: xdr: bool not 0 or 1
}
