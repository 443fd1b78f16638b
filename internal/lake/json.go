package lake

import (
	"encoding/base64"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// appendJSON appends v as JSON text. depth is v's nesting depth as
// otlpwire.Validate counts it: 1 for an attribute's or a body's value.
// Values are written as follows: strings as JSON strings, ints and
// doubles as numbers, a double always with a fraction or an exponent
// ("1.0", "1e+21") so that a reader tells it from an int (NaN and ±Inf
// as the strings "NaN", "Infinity", "-Infinity", as proto3 JSON writes
// them), bools, bytes as base64
// strings, arrays as arrays, key-value lists as objects (keys in the order
// sent) and an empty value as null.
func appendJSON(dst []byte, v otlpwire.Value, depth int) ([]byte, error) {
	if depth > otlpwire.MaxAnyValueDepth {
		return dst, &otlpwire.Error{What: "AnyValue", Err: otlpwire.ErrTooDeep}
	}
	switch v.Type() {
	case otlpwire.ValueString:
		return appendJSONString(dst, v.Str()), nil
	case otlpwire.ValueInt:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case otlpwire.ValueDouble:
		return appendJSONValue(dst, KindDouble, math.Float64bits(v.Double()), nil), nil
	case otlpwire.ValueBool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case otlpwire.ValueBytes:
		dst = append(dst, '"')
		dst = base64.StdEncoding.AppendEncode(dst, v.Bytes())
		return append(dst, '"'), nil
	case otlpwire.ValueArray:
		dst = append(dst, '[')
		first := true
		for e, err := range v.Array().All() {
			if err != nil {
				return dst, err
			}
			if !first {
				dst = append(dst, ',')
			}
			first = false
			if dst, err = appendJSON(dst, e, depth+1); err != nil {
				return dst, err
			}
		}
		return append(dst, ']'), nil
	case otlpwire.ValueKVList:
		return appendJSONObject(dst, v.KVList(), depth+1)
	}
	return append(dst, "null"...), nil
}

// appendJSONObject appends the pairs as a JSON object, keys in the order
// sent (a repeated key is written again, as pdata's Map.Range yields it),
// values at nesting depth depth.
func appendJSONObject(dst []byte, pairs otlpwire.Attributes, depth int) ([]byte, error) {
	dst = append(dst, '{')
	first := true
	for kv, err := range pairs.All() {
		if err != nil {
			return dst, err
		}
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = appendJSONString(dst, kv.Key)
		dst = append(dst, ':')
		if dst, err = appendJSON(dst, kv.Value, depth); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD, as encoding/json does.
func appendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				dst = append(dst, '\\', c)
			case c >= 0x20:
				dst = append(dst, c)
			case c == '\n':
				dst = append(dst, '\\', 'n')
			case c == '\r':
				dst = append(dst, '\\', 'r')
			case c == '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+n]...)
		}
		i += n
	}
	return append(dst, '"')
}

// AppendValueText appends v as a version-2 file's attribute map and a
// log's body column hold it: a string as it is, an int in decimal, a
// double in Go's shortest form, a bool as true or false, bytes in base64,
// an array or key-value list as JSON; nothing for an empty value. Readers
// of records not yet in files (the spool's) render them with it, so that
// both compare alike.
func AppendValueText(dst []byte, v otlpwire.Value) ([]byte, error) {
	switch v.Type() {
	case otlpwire.ValueString:
		return append(dst, v.Str()...), nil
	case otlpwire.ValueInt:
		return appendText(dst, KindInt, uint64(v.Int()), nil), nil
	case otlpwire.ValueDouble:
		return appendText(dst, KindDouble, math.Float64bits(v.Double()), nil), nil
	case otlpwire.ValueBool:
		var n uint64
		if v.Bool() {
			n = 1
		}
		return appendText(dst, KindBool, n, nil), nil
	case otlpwire.ValueBytes:
		return appendText(dst, KindBytes, 0, v.Bytes()), nil
	case otlpwire.ValueArray, otlpwire.ValueKVList:
		return appendJSON(dst, v, 1)
	}
	return dst, nil
}
