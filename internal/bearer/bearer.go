// Package bearer authenticates OTLP exporters by bearer token, as the
// OpenTelemetry Collector's bearertokenauth extension does: a request
// carries "Authorization: Bearer <token>" (gRPC: the authorization
// metadata) and the token must be one of a file's. Each token may name the
// tenant its data belongs to, so one server can take several tenants'
// telemetry and keep their lake partitions apart, and may be marked as an
// operator's (role=operator), which the admin server lets read what
// concerns every tenant: its own /metrics, profiles, every tenant's
// figures on the status page. A file that neither names a tenant nor
// marks a token (one tenant, the default) makes every token an
// operator's, as before the mark existed; once a file names a tenant or
// marks a token, only the marked tokens are operators'. (The OTLP
// receiver takes the tenant alone: the mark means nothing there.)
//
// The file is re-read when it changes (looked at, at a request, at most
// once a second), so tokens are added and revoked without a restart.
// Revocation fails closed: a re-read file's valid lines are the tokens in
// force, whatever else it holds (a bad line is skipped and reported), an
// emptied file refuses every request, and so does a file that is gone or
// unreadable. Only the first read, at Load, is strict: any bad line, or no
// token at all, is an error, so a mistake shows at startup.
package bearer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/wirehouse/wirehouse/internal/watch"
)

// Errors of Authenticate, for errors.Is.
var (
	ErrMissing = errors.New("missing bearer token")
	ErrUnknown = errors.New("unknown bearer token")
)

// Token length bounds, in bytes.
const (
	MinTokenLen = 16
	MaxTokenLen = 1024
)

// reloadEvery is how often a request may look at the file again.
var reloadEvery = time.Second

// Tokens is the token set of a file. It is safe for concurrent use.
type Tokens struct {
	path        string
	validTenant func(string) bool
	onReload    func(n int, err error)
	// defaultName is the name of the default tenant (SetDefaultTenant):
	// a token naming it is the default tenant's.
	defaultName string

	mu     sync.Mutex
	tokens map[[sha256.Size]byte]Identity // by the token's SHA-256
	files  *watch.Files
}

// Identity is what a token stands for.
type Identity struct {
	// Tenant is the tenant the token names, "" when it names none.
	Tenant string
	// Operator is set for a token marked role=operator, and for every
	// token of a file that names no tenant and marks no token.
	Operator bool
}

// RoleOperator is the field that marks an operator's token.
const RoleOperator = "role=operator"

// Load reads the tokens file at path. One token per line, optionally
// followed by whitespace and a tenant name, then optionally by
// whitespace and the operator's mark:
//
//	# comment
//	<token>
//	<token> <tenant>
//	<token> role=operator
//	<token> <tenant> role=operator
//
// Blank lines and lines starting with # are skipped. A token is 16 to
// 1024 printable ASCII characters without spaces; a token may appear once.
// A field holding "=" is an option, never a tenant; role=operator is the
// only one. validTenant, if not nil, checks tenant names. onReload, if
// not nil, is told of every later reload: the number of tokens now in
// force, or the error that left the previous set in force. It runs during
// a request and must be quick.
func Load(path string, validTenant func(string) bool, onReload func(n int, err error)) (*Tokens, error) {
	t := &Tokens{path: path, validTenant: validTenant, onReload: onReload, files: watch.New(reloadEvery, path)}
	if err := t.load(true); err != nil {
		return nil, err
	}
	return t, nil
}

// Len is the number of tokens in force.
func (t *Tokens) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.tokens)
}

// load reads the file; the caller holds mu or owns t. Strict, any fault
// is an error and changes nothing; otherwise the valid lines are put in
// force and the faults returned, and a file that cannot be read leaves no
// token in force.
func (t *Tokens) load(strict bool) error {
	t.files.Mark() // a file that is gone is looked at again
	b, err := os.ReadFile(t.path)
	if err != nil {
		if !strict {
			t.tokens = nil // fail closed
		}
		return fmt.Errorf("bearer tokens: %w", err)
	}
	tokens, err := parse(b, t.validTenant, strict)
	if err != nil && strict {
		return fmt.Errorf("bearer tokens %s: %w", t.path, err)
	}
	t.tokens = tokens
	if err != nil {
		return fmt.Errorf("bearer tokens %s: %w", t.path, err)
	}
	return nil
}

// parse reads a tokens file's contents: the identities of its valid
// lines' tokens and the faults of the others (a token given twice keeps
// neither line, as which tenant is meant is unknown), or, strict, an error
// at the first fault or when no token is left. Whether the file names a
// tenant or marks a token is judged on every line, skipped ones too, so a
// bad line never makes the others operators'.
func parse(b []byte, validTenant func(string) bool, strict bool) (map[[sha256.Size]byte]Identity, error) {
	tokens := map[[sha256.Size]byte]Identity{}
	twice := map[[sha256.Size]byte]bool{}
	marked := false // a line names a tenant or has an option
	var faults []error
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 4096), MaxTokenLen+4096)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		marked = marked || len(fields) > 1
		id, fault := parseFields(fields, validTenant)
		if fault == nil {
			h := sha256.Sum256([]byte(fields[0]))
			if _, dup := tokens[h]; dup || twice[h] {
				fault = errors.New("token given twice")
				delete(tokens, h)
				twice[h] = true
			} else {
				tokens[h] = id
			}
		}
		if fault != nil {
			if strict {
				return nil, fmt.Errorf("line %d: %w", line, fault)
			}
			faults = append(faults, fmt.Errorf("line %d (skipped): %w", line, fault))
		}
	}
	if err := sc.Err(); err != nil {
		if strict {
			return nil, err
		}
		faults = append(faults, err)
	}
	if strict && len(tokens) == 0 {
		return nil, errors.New("no tokens: the file would refuse every request")
	}
	if !marked {
		for h, id := range tokens {
			id.Operator = true
			tokens[h] = id
		}
	}
	return tokens, errors.Join(faults...)
}

// parseFields reads a line's fields: a token, at most one tenant, then
// at most one option, RoleOperator.
func parseFields(fields []string, validTenant func(string) bool) (Identity, error) {
	var id Identity
	if err := checkToken(fields[0]); err != nil {
		return id, err
	}
	rest := fields[1:]
	if len(rest) > 0 && !strings.Contains(rest[0], "=") {
		id.Tenant, rest = rest[0], rest[1:]
		if validTenant != nil && !validTenant(id.Tenant) {
			return id, fmt.Errorf("invalid tenant %q", id.Tenant)
		}
	}
	switch {
	case len(rest) > 1:
		return id, fmt.Errorf("want a token, at most a tenant and %s, got %d fields", RoleOperator, len(fields))
	case len(rest) == 1 && rest[0] != RoleOperator:
		if !strings.Contains(rest[0], "=") {
			return id, fmt.Errorf("want a token, at most a tenant and %s, got %d fields", RoleOperator, len(fields))
		}
		return id, fmt.Errorf("unknown option %q, want %s", rest[0], RoleOperator)
	}
	id.Operator = len(rest) == 1
	return id, nil
}

func checkToken(tok string) error {
	if len(tok) < MinTokenLen || len(tok) > MaxTokenLen {
		return fmt.Errorf("token of %d bytes, want %d to %d", len(tok), MinTokenLen, MaxTokenLen)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] <= ' ' || tok[i] > '~' {
			return fmt.Errorf("token byte %d is not printable ASCII", i)
		}
	}
	return nil
}

// SetDefaultTenant names the server's default tenant (its lake
// partition, serve's lake.tenant): a token that names it is the default
// tenant's, and Identify and Authenticate give "" for it, as for a token
// naming none, so that every layer past authentication knows the default
// tenant by one name, "" (internal/tenant). Call it before t is used.
func (t *Tokens) SetDefaultTenant(name string) { t.defaultName = name }

// Authenticate checks an Authorization value, "Bearer <token>" (the scheme
// in any case), and returns the token's tenant, "" when it names none. The
// token is compared by its SHA-256, so the lookup's timing says nothing
// about the tokens' bytes. Errors wrap ErrMissing or ErrUnknown and never
// include the token.
func (t *Tokens) Authenticate(authorization string) (string, error) {
	id, err := t.Identify(authorization)
	return id.Tenant, err
}

// Identify checks an Authorization value as Authenticate does and
// returns the token's Identity: its tenant ("" for the default, see
// SetDefaultTenant) and whether it is an operator's. Errors are
// Authenticate's.
func (t *Tokens) Identify(authorization string) (Identity, error) {
	scheme, tok, _ := strings.Cut(strings.TrimSpace(authorization), " ")
	if authorization == "" {
		return Identity{}, fmt.Errorf("%w: send Authorization: Bearer <token>", ErrMissing)
	}
	if !strings.EqualFold(scheme, "Bearer") {
		return Identity{}, fmt.Errorf("%w: Authorization scheme is not Bearer", ErrMissing)
	}
	h := sha256.Sum256([]byte(strings.TrimSpace(tok)))
	t.mu.Lock()
	if t.files.Changed(time.Now()) {
		err := t.load(false)
		if t.onReload != nil {
			t.onReload(len(t.tokens), err)
		}
	}
	id, ok := t.tokens[h]
	t.mu.Unlock()
	if !ok {
		return Identity{}, ErrUnknown
	}
	if id.Tenant == t.defaultName {
		id.Tenant = ""
	}
	return id, nil
}
