package otlpwire

import "google.golang.org/protobuf/encoding/protowire"

// fieldDeprecatedScopes is the resource containers' deprecated
// instrumentation_library_* field, from OTLP 0.15 to 0.19:
//
//	message ResourceLogs {
//	  Resource resource = 1; repeated ScopeLogs scope_logs = 2; string schema_url = 3;
//	  repeated InstrumentationLibraryLogs instrumentation_library_logs = 1000;
//	}
//
// (ResourceSpans and ResourceMetrics alike). An InstrumentationLibrary*
// container is a scope container on the wire: its library (1) reads as an
// InstrumentationScope, its records (2) and schema_url (3) are the same.
const fieldDeprecatedScopes protowire.Number = 1000

// MigrateDeprecated rewrites an export request of any signal whose
// resource containers carry their scope containers in the deprecated
// instrumentation_library_* field (1000) instead of scope_* (2), as the
// Collector's receivers do (pdata's otlp.Migrate*): a resource container
// with no scope container takes the deprecated ones, renumbered; one that
// has scope containers keeps them and the deprecated ones stay unknown
// fields, which every reader here skips.
//
// When a container needs it, MigrateDeprecated appends the rewritten
// request to dst and returns it with true; every other field is copied
// byte for byte. Otherwise it returns dst unchanged and false, having read
// only the top-level fields of the request and of its resource containers,
// without allocating. A malformed request is left as it is (false, dst
// unchanged in length): Validate reports what is wrong with it.
//
// The rewritten request is never longer than req (field 2's tag is one byte
// shorter than field 1000's), so a dst with len(req) bytes of spare capacity
// is not grown; NeedsMigration says beforehand whether a copy may be needed.
// dst must not overlap req.
func MigrateDeprecated(dst, req []byte) ([]byte, bool) {
	if !NeedsMigration(req) {
		return dst, false
	}
	start := len(dst)
	for i := 0; i < len(req); {
		n, typ, _, s, j, err := next(req, i)
		if err != nil {
			// NeedsMigration stopped at the first container to migrate:
			// the rest is malformed.
			return dst[:start], false
		}
		if n != fieldResources || typ != wireBytes || !deprecatedOnly(s) {
			dst = append(dst, req[i:j]...)
			i = j
			continue
		}
		// Two passes over the container, which deprecatedOnly has read
		// without error: its new length, then its fields, written
		// straight into dst.
		size := 0
		for k := 0; k < len(s); {
			m, mtyp, _, v, l, _ := next(s, k)
			if m == fieldDeprecatedScopes && mtyp == wireBytes {
				size += 1 + protowire.SizeBytes(len(v))
			} else {
				size += l - k
			}
			k = l
		}
		dst = protowire.AppendTag(dst, fieldResources, protowire.BytesType)
		dst = protowire.AppendVarint(dst, uint64(size))
		for k := 0; k < len(s); {
			m, mtyp, _, v, l, _ := next(s, k)
			if m == fieldDeprecatedScopes && mtyp == wireBytes {
				dst = protowire.AppendTag(dst, fieldChildren, protowire.BytesType)
				dst = protowire.AppendBytes(dst, v)
			} else {
				dst = append(dst, s[k:l]...)
			}
			k = l
		}
		i = j
	}
	return dst, true
}

// NeedsMigration reports whether a resource container of req, before any
// malformed top-level field, has deprecated scope containers and no scope_*
// one: whether MigrateDeprecated rewrites req, unless req turns out to be
// malformed further on, when MigrateDeprecated leaves it as it is. It reads
// only the top-level fields of req and of its resource containers, and does
// not allocate.
func NeedsMigration(req []byte) bool {
	for i := 0; i < len(req); {
		n, typ, _, s, j, err := next(req, i)
		if err != nil {
			return false
		}
		if n == fieldResources && typ == wireBytes && deprecatedOnly(s) {
			return true
		}
		i = j
	}
	return false
}

// deprecatedOnly reports whether the resource container rc has deprecated
// scope containers and no scope_* one. A malformed container reports
// false.
func deprecatedOnly(rc []byte) bool {
	deprecated := false
	for i := 0; i < len(rc); {
		n, typ, _, _, j, err := next(rc, i)
		if err != nil {
			return false
		}
		switch {
		case n == fieldChildren:
			return false
		case n == fieldDeprecatedScopes && typ == wireBytes:
			deprecated = true
		}
		i = j
	}
	return deprecated
}
