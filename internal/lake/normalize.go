package lake

// Origin says where an attribute came from, and so its column prefix.
type Origin uint8

const (
	OriginResource Origin = iota // resource_<key>
	OriginScope                  // scope_<key>
	OriginRecord                 // attr_<key>
	numOrigins
)

var prefixes = [numOrigins]string{"resource_", "scope_", "attr_"}

// ColumnName returns the column of attribute key from origin: the key is
// lowercased, every byte outside [a-z0-9] becomes '_', and the origin's
// prefix is added unless the key as sent starts with '_' (as in the seed's
// ingester, which passes such keys through).
//
// Different keys can normalize to the same name ("http.method" and
// "http_method"); Names resolves such collisions.
func ColumnName(origin Origin, key []byte) string {
	b := make([]byte, 0, len(prefixes[origin])+len(key))
	if len(key) == 0 || key[0] != '_' {
		b = append(b, prefixes[origin]...)
	}
	return string(appendNormalized(b, key))
}

func appendNormalized(dst, key []byte) []byte {
	for _, c := range key {
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		default:
			c = '_'
		}
		dst = append(dst, c)
	}
	return dst
}
