package metricstore

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"

	"github.com/wirehouse/wirehouse/otlpwire"
)

// appendValueString appends the label value of v to dst, as pdata's
// pcommon.Value.AsString formats it (the form Prometheus' OTLP translator
// uses): strings as they are, bools and ints in Go syntax, doubles as
// ECMAScript numbers, bytes in standard base64, arrays and key-value lists as
// JSON. It allocates only for arrays and key-value lists.
func appendValueString(dst []byte, v otlpwire.Value) ([]byte, error) {
	switch v.Type() {
	case otlpwire.ValueString:
		return append(dst, v.Str()...), nil
	case otlpwire.ValueBool:
		return strconv.AppendBool(dst, v.Bool()), nil
	case otlpwire.ValueInt:
		return strconv.AppendInt(dst, v.Int(), 10), nil
	case otlpwire.ValueDouble:
		return appendFloatAsString(dst, v.Double()), nil
	case otlpwire.ValueBytes:
		return base64.StdEncoding.AppendEncode(dst, v.Bytes()), nil
	case otlpwire.ValueArray, otlpwire.ValueKVList:
		raw, err := asRaw(v)
		if err != nil {
			return dst, err
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(raw) // as pdata: a NaN inside fails and yields ""
		return append(dst, strings.TrimRight(buf.String(), "\n")...), nil
	}
	return dst, nil
}

// asRaw is pcommon.Value.AsRaw.
func asRaw(v otlpwire.Value) (any, error) {
	switch v.Type() {
	case otlpwire.ValueString:
		return string(v.Str()), nil
	case otlpwire.ValueBool:
		return v.Bool(), nil
	case otlpwire.ValueInt:
		return v.Int(), nil
	case otlpwire.ValueDouble:
		return v.Double(), nil
	case otlpwire.ValueBytes:
		return bytes.Clone(v.Bytes()), nil
	case otlpwire.ValueArray:
		out := []any{}
		for e, err := range v.Array().All() {
			if err != nil {
				return nil, err
			}
			r, err := asRaw(e)
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
		return out, nil
	case otlpwire.ValueKVList:
		out := map[string]any{}
		for kv, err := range v.KVList().All() {
			if err != nil {
				return nil, err
			}
			r, err := asRaw(kv.Value)
			if err != nil {
				return nil, err
			}
			out[string(kv.Key)] = r
		}
		return out, nil
	}
	return nil, nil
}

// appendFloatAsString is pdata's float64AsString.
func appendFloatAsString(dst []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	start := len(dst)
	dst = strconv.AppendFloat(dst, f, format, -1, 64)
	if format == 'e' {
		b := dst[start:]
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			dst = dst[:len(dst)-1]
		}
	}
	return dst
}
