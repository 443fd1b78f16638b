package synth

import (
	"encoding/binary"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"
)

// KeyValue fast paths: they compute the sizes up front instead of going
// through begin/end, since attributes are most of every request.

// One-byte tags of KeyValue and AnyValue fields.
const (
	tagKey    = byte(keyValueKey)<<3 | byte(protowire.BytesType)
	tagValue  = byte(keyValueValue)<<3 | byte(protowire.BytesType)
	tagString = byte(anyValueString)<<3 | byte(protowire.BytesType)
	tagInt    = byte(anyValueInt)<<3 | byte(protowire.VarintType)
	tagDouble = byte(anyValueDouble)<<3 | byte(protowire.Fixed64Type)
	tagBool   = byte(anyValueBool)<<3 | byte(protowire.VarintType)
)

// kvHead appends to b the tag and length of a KeyValue field num whose
// AnyValue has avLen content bytes, then, in Ascending order, the key, and
// the value's header. The caller appends the AnyValue content, then kvTail.
// Working on a local slice keeps e.buf stores (and GC write barriers) to
// one per KeyValue.
func (e *encoder) kvHead(b []byte, num protowire.Number, key string, avLen int) []byte {
	e.mark(num, len(b))
	keyLen := 0
	if key != "" {
		keyLen = 1 + protowire.SizeBytes(len(key))
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	b = protowire.AppendVarint(b, uint64(keyLen+1+protowire.SizeBytes(avLen)))
	if e.order == Ascending && key != "" {
		b = append(b, tagKey)
		b = protowire.AppendString(b, key)
	}
	b = append(b, tagValue)
	return protowire.AppendVarint(b, uint64(avLen))
}

// kvTail finishes a KeyValue started by kvHead and stores b as e.buf.
func (e *encoder) kvTail(b []byte, key string) {
	if e.order == Descending && key != "" {
		b = append(b, tagKey)
		b = protowire.AppendString(b, key)
	}
	e.buf = b
}

// kvString writes a KeyValue with a string value.
func (e *encoder) kvString(num protowire.Number, key, val string) {
	b := e.kvHead(e.buf, num, key, 1+protowire.SizeBytes(len(val)))
	b = append(b, tagString)
	e.kvTail(protowire.AppendString(b, val), key)
}

// kvStringBytes writes a KeyValue with a string value held in val.
func (e *encoder) kvStringBytes(num protowire.Number, key string, val []byte) {
	b := e.kvHead(e.buf, num, key, 1+protowire.SizeBytes(len(val)))
	b = append(b, tagString)
	e.kvTail(protowire.AppendBytes(b, val), key)
}

// kvInt writes a KeyValue with an int value.
func (e *encoder) kvInt(num protowire.Number, key string, v int64) {
	b := e.kvHead(e.buf, num, key, 1+protowire.SizeVarint(uint64(v)))
	b = append(b, tagInt)
	e.kvTail(protowire.AppendVarint(b, uint64(v)), key)
}

// kvDouble writes a KeyValue with a double value.
func (e *encoder) kvDouble(num protowire.Number, key string, v float64) {
	b := e.kvHead(e.buf, num, key, 9)
	b = append(b, tagDouble)
	e.kvTail(protowire.AppendFixed64(b, math.Float64bits(v)), key)
}

// kvBool writes a KeyValue with a bool value.
func (e *encoder) kvBool(num protowire.Number, key string, v bool) {
	b := e.kvHead(e.buf, num, key, 2)
	e.kvTail(append(b, tagBool, byte(protowire.EncodeBool(v))), key)
}

// Composing strings in g.tmp.

// hex appends n random lowercase hex digits to g.tmp.
func (g *gen) hex(n int) {
	const digits = "0123456789abcdef"
	for n > 0 {
		v := g.r.Uint64()
		for i := 0; i < 16 && n > 0; i, n = i+1, n-1 {
			g.tmp = append(g.tmp, digits[v&15])
			v >>= 4
		}
	}
}

// alnum appends n random characters of a Kubernetes name suffix to g.tmp.
func (g *gen) alnum(n int) {
	const chars = "bcdfghjklmnpqrstvwxz2456789" // what Kubernetes uses for suffixes
	for range n {
		g.tmp = append(g.tmp, chars[g.r.IntN(len(chars))])
	}
}

// uuid appends a random version 4 UUID to g.tmp.
func (g *gen) uuid() {
	const digits = "0123456789abcdef"
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], g.r.Uint64())
	binary.BigEndian.PutUint64(b[8:], g.r.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			g.tmp = append(g.tmp, '-')
		}
		g.tmp = append(g.tmp, digits[c>>4], digits[c&15])
	}
}

// ipv4 appends a private IPv4 address to g.tmp.
func (g *gen) ipv4() {
	g.tmp = append(g.tmp, "10."...)
	g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(256)), 10)
	g.tmp = append(g.tmp, '.')
	g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(256)), 10)
	g.tmp = append(g.tmp, '.')
	g.tmp = strconv.AppendInt(g.tmp, int64(1+g.r.IntN(254)), 10)
}

// oneOf returns a random element of s.
func oneOf[T any](g *gen, s []T) T { return s[g.r.IntN(len(s))] }

// Resources of logs and traces: a service instance running in a pod.

// resourceSchemaURL is the schema URL of every generated resource container.
const resourceSchemaURL = "https://opentelemetry.io/schemas/1.34.0"

// service is an application the generated telemetry comes from.
type service struct {
	name, namespace, language, sdkVersion string
}

var services = []service{
	{"frontend", "shop", "nodejs", "1.30.1"},
	{"checkout", "shop", "go", "1.37.0"},
	{"cart", "shop", "dotnet", "1.12.0"},
	{"payment", "payments", "java", "1.51.0"},
	{"fraud-detection", "payments", "java", "1.51.0"},
	{"product-catalog", "shop", "go", "1.37.0"},
	{"recommendation", "shop", "python", "1.34.1"},
	{"shipping", "logistics", "rust", "0.30.0"},
	{"quote", "logistics", "php", "1.5.0"},
	{"email", "notifications", "ruby", "1.8.0"},
	{"ad", "marketing", "java", "1.51.0"},
	{"accounting", "payments", "dotnet", "1.12.0"},
	{"auth", "identity", "go", "1.37.0"},
	{"search", "shop", "python", "1.34.1"},
	{"inventory", "logistics", "go", "1.37.0"},
	{"image-provider", "shop", "cpp", "1.21.0"},
}

var (
	environments = []string{"production", "production", "production", "staging", "canary"}
	regions      = []string{"us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2"}
	hostArchs    = []string{"amd64", "amd64", "amd64", "arm64"}
)

// resourceKeys are the resource attributes of logs and traces, most
// important first: a resource with n attributes has the first n.
var resourceKeys = []string{
	"service.name",
	"service.version",
	"host.name",
	"k8s.namespace.name",
	"k8s.pod.name",
	"k8s.node.name",
	"deployment.environment.name",
	"telemetry.sdk.language",
	"cloud.region",
	"k8s.deployment.name",
	"service.namespace",
	"service.instance.id",
	"telemetry.sdk.name",
	"telemetry.sdk.version",
	"k8s.pod.uid",
	"k8s.cluster.name",
	"cloud.provider",
	"cloud.availability_zone",
	"host.arch",
	"os.type",
	"container.id",
	"k8s.replicaset.name",
}

// writeServiceResource writes the fields of the Resource of a service
// instance running in a Kubernetes pod.
func (g *gen) writeServiceResource() {
	svc := oneOf(g, services)
	lo, hi := g.p.resourceAttrs[0], g.p.resourceAttrs[1]
	n := lo + g.r.IntN(hi-lo+1)
	// Draw every value, used or not, so that n only changes the count.
	g.tmp = g.tmp[:0]
	g.tmp = append(g.tmp, svc.name...)
	g.tmp = append(g.tmp, '-')
	g.hex(10)
	rsEnd := len(g.tmp)
	g.tmp = append(g.tmp, '-')
	g.alnum(5)
	podEnd := len(g.tmp)
	g.tmp = append(g.tmp, "ip-10-0-"...)
	g.tmp = strconv.AppendInt(g.tmp, int64(g.r.IntN(64)), 10)
	g.tmp = append(g.tmp, '-')
	g.tmp = strconv.AppendInt(g.tmp, int64(1+g.r.IntN(254)), 10)
	g.tmp = append(g.tmp, ".ec2.internal"...)
	nodeEnd := len(g.tmp)
	g.uuid()
	instEnd := len(g.tmp)
	g.uuid()
	uidEnd := len(g.tmp)
	g.hex(64)
	cidEnd := len(g.tmp)
	version := []byte{'1', '.', byte('0' + g.r.IntN(10)), '.', byte('0' + g.r.IntN(10))}
	env := oneOf(g, environments)
	region := oneOf(g, regions)
	zone := string(rune('a' + g.r.IntN(3)))
	arch := oneOf(g, hostArchs)

	pod, rs, node := g.tmp[:podEnd], g.tmp[:rsEnd], g.tmp[podEnd:nodeEnd]
	e := g.e
	for i, key := range resourceKeys[:min(n, len(resourceKeys))] {
		switch i {
		case 0:
			e.kvString(resourceAttributes, key, svc.name)
		case 1:
			e.kvStringBytes(resourceAttributes, key, version)
		case 2, 4:
			e.kvStringBytes(resourceAttributes, key, pod)
		case 3:
			e.kvString(resourceAttributes, key, svc.namespace)
		case 5:
			e.kvStringBytes(resourceAttributes, key, node)
		case 6:
			e.kvString(resourceAttributes, key, env)
		case 7:
			e.kvString(resourceAttributes, key, svc.language)
		case 8:
			e.kvString(resourceAttributes, key, region)
		case 9:
			e.kvString(resourceAttributes, key, svc.name)
		case 10:
			e.kvString(resourceAttributes, key, svc.namespace)
		case 11:
			e.kvStringBytes(resourceAttributes, key, g.tmp[nodeEnd:instEnd])
		case 12:
			e.kvString(resourceAttributes, key, "opentelemetry")
		case 13:
			e.kvString(resourceAttributes, key, svc.sdkVersion)
		case 14:
			e.kvStringBytes(resourceAttributes, key, g.tmp[instEnd:uidEnd])
		case 15:
			e.kvString(resourceAttributes, key, "prod-"+region)
		case 16:
			e.kvString(resourceAttributes, key, "aws")
		case 17:
			e.kvString(resourceAttributes, key, region+zone)
		case 18:
			e.kvString(resourceAttributes, key, arch)
		case 19:
			e.kvString(resourceAttributes, key, "linux")
		case 20:
			e.kvStringBytes(resourceAttributes, key, g.tmp[uidEnd:cidEnd])
		case 21:
			e.kvStringBytes(resourceAttributes, key, rs)
		}
	}
}

// Instrumentation scopes.

// scopeInfo is an instrumentation library.
type scopeInfo struct {
	name, version, schemaURL string
}

var logScopes = []scopeInfo{
	{"go.opentelemetry.io/contrib/bridges/otelslog", "0.12.0", ""},
	{"io.opentelemetry.logback-appender-1.0", "2.17.0-alpha", ""},
	{"opentelemetry.sdk._logs", "1.34.1", ""},
	{"github.com/acme/shop/internal/server", "", ""},
	{"OpenTelemetry.Logs", "1.12.0", ""},
	{"com.acme.payment.PaymentService", "", ""},
}

var traceScopes = []scopeInfo{
	{"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp", "0.62.0", "https://opentelemetry.io/schemas/1.26.0"},
	{"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc", "0.62.0", "https://opentelemetry.io/schemas/1.26.0"},
	{"io.opentelemetry.jdbc", "2.17.0-alpha", ""},
	{"io.opentelemetry.kafka-clients-2.6", "2.17.0-alpha", ""},
	{"opentelemetry.instrumentation.flask", "0.55b1", "https://opentelemetry.io/schemas/1.11.0"},
	{"github.com/acme/shop/checkout", "1.4.2", ""},
}

// writeScope writes the fields of an InstrumentationScope and returns its
// schema URL. The fixture always has a name and a version.
func (g *gen) writeScope(scopes []scopeInfo) string {
	s := oneOf(g, scopes)
	g.e.str(scopeName, s.name)
	if s.version == "" && g.p.fixture {
		s.version = "1.0.0"
	}
	g.e.str(scopeVersion, s.version)
	if !g.p.fixture && g.chance(0.1) {
		g.e.kvString(scopeAttributes, "library.language", "go")
	}
	return s.schemaURL
}
