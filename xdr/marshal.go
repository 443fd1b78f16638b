package xdr

// Marshaler is implemented by generated types: AppendXDR appends the value's
// encoding to dst and returns the extended slice (aliasing dst when it has
// room), or dst unchanged and an *Error.
type Marshaler interface {
	AppendXDR(dst []byte) ([]byte, error)
}

// Unmarshaler is implemented by generated types: DecodeXDR consumes one
// value from d. Decoded []byte and string fields are copies; nothing in the
// value aliases d's input.
type Unmarshaler interface {
	DecodeXDR(d *Decoder) error
}

// Marshal returns the encoding of v in a new slice owned by the caller. To
// avoid the allocation, call v.AppendXDR with a reused buffer instead.
func Marshal(v Marshaler) ([]byte, error) {
	return v.AppendXDR(make([]byte, 0, 256))
}

// Unmarshal decodes exactly one value from b into v. Bytes left over after
// the value are an error (ErrTrailing). v does not alias b.
func Unmarshal(b []byte, v Unmarshaler) error {
	d := Decoder{buf: b}
	if err := v.DecodeXDR(&d); err != nil {
		return err
	}
	return d.Done()
}
