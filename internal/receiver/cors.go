package receiver

import (
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/rs/cors"
)

// CORSConfig is the cross-origin policy of OTLP/HTTP, as the Collector's
// confighttp cors settings, and with the same library (rs/cors): a
// preflight from an allowed origin is answered 204 with the
// Access-Control-* headers, and responses to allowed origins carry
// Access-Control-Allow-Origin. An Authorization header (a bearer token)
// is allowed; browser credentials (cookies, TLS client certificates) are
// not, so a page cannot export with its visitor's certificate.
type CORSConfig struct {
	// AllowedOrigins are origins such as "https://app.example.com", with
	// at most one "*" wildcard each ("https://*.example.com"), or "*" for
	// any. Empty: no CORS, preflights are refused (405).
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHeaders are request headers allowed besides Content-Type,
	// Content-Encoding and Authorization.
	AllowedHeaders []string `yaml:"allowed_headers"`
	// MaxAge is how long a browser may cache a preflight's answer; 0
	// leaves it to the browser.
	MaxAge time.Duration `yaml:"max_age"`
}

// Validate reports an origin pattern rs/cors would not match as meant.
func (c CORSConfig) Validate() error {
	for _, o := range c.AllowedOrigins {
		if o == "" || strings.Count(o, "*") > 1 {
			return fmt.Errorf("CORS allowed origin %q: want an origin with at most one * wildcard", o)
		}
	}
	if c.MaxAge < 0 {
		return fmt.Errorf("CORS max age must not be negative, got %s", c.MaxAge)
	}
	return nil
}

// wrap puts h behind the CORS policy.
func (c CORSConfig) wrap(h http.Handler) http.Handler {
	return cors.New(cors.Options{
		AllowedOrigins: c.AllowedOrigins,
		AllowedMethods: []string{http.MethodPost},
		AllowedHeaders: append([]string{"Content-Type", "Content-Encoding", "Authorization"}, c.AllowedHeaders...),
		MaxAge:         int(c.MaxAge / time.Second),
	}).Handler(h)
}
