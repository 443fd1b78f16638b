package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// static holds the pages' files, served under /static/ (index.html for
// every page's path).
//
//go:embed static
var static embed.FS

// asset is one embedded file, ready to serve: its bytes, gzipped once at
// start when that makes them smaller, and an ETag of its content.
type asset struct {
	name  string
	ctype string
	raw   []byte
	gz    []byte // nil when gzip does not help
	etag  string
}

// assets are the embedded files by name under static/.
type assets struct{ byName map[string]*asset }

// loadAssets reads and compresses every embedded file.
func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]*asset{}}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, "static/")
		sum := sha256.Sum256(raw)
		f := &asset{name: name, ctype: contentType(name), raw: raw, etag: `"` + hex.EncodeToString(sum[:12]) + `"`}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(raw) //nolint:errcheck // a bytes.Buffer does not fail
		zw.Close()    //nolint:errcheck
		if buf.Len() < len(raw) {
			f.gz = buf.Bytes()
		}
		a.byName[name] = f
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("webui: read embedded files: %w", err)
	}
	if a.byName["index.html"] == nil {
		return nil, fmt.Errorf("webui: index.html not embedded")
	}
	return a, nil
}

// contentType is the Content-Type of the file name.
func contentType(name string) string {
	switch path.Ext(name) {
	case ".js", ".mjs":
		return "text/javascript; charset=utf-8"
	case ".css":
		return "text/css; charset=utf-8"
	case ".html":
		return "text/html; charset=utf-8"
	case ".svg":
		return "image/svg+xml"
	case "", ".md", ".txt":
		return "text/plain; charset=utf-8"
	}
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		return t
	}
	return "application/octet-stream"
}

// ServeHTTP serves /static/{file...}.
func (a *assets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f := a.byName[r.PathValue("file")]
	if f == nil || f.name == "index.html" {
		http.NotFound(w, r)
		return
	}
	f.serve(w, r)
}

// handler serves the file name, whatever the request's path.
func (a *assets) handler(name string) http.Handler {
	f := a.byName[name]
	return http.HandlerFunc(f.serve)
}

// securityHeaders are sent with every file: the pages load code, styles
// and data from this server only and are never framed.
var securityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
		"connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'",
	"X-Content-Type-Options": "nosniff",
	"X-Frame-Options":        "DENY",
	"Referrer-Policy":        "same-origin",
}

// serve writes f, gzipped if the client takes it, or 304 when the
// client's copy is current. Browsers revalidate every time (no-cache):
// a new binary's files are never mixed with an old one's.
func (f *asset) serve(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	for k, v := range securityHeaders {
		h.Set(k, v)
	}
	h.Set("Content-Type", f.ctype)
	h.Set("Cache-Control", "no-cache")
	h.Set("ETag", f.etag)
	h.Set("Vary", "Accept-Encoding")
	if etagMatch(r.Header.Get("If-None-Match"), f.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := f.raw
	if f.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
		body = f.gz
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	w.Write(body) //nolint:errcheck // the client went away
}

// etagMatch reports whether an If-None-Match header names etag (or *).
func etagMatch(header, etag string) bool {
	for t := range strings.SplitSeq(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// acceptsGzip reports whether an Accept-Encoding header takes gzip.
func acceptsGzip(header string) bool {
	for e := range strings.SplitSeq(header, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(e), ";")
		if !strings.EqualFold(strings.TrimSpace(name), "gzip") {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, _ := strings.Cut(strings.TrimSpace(p), "="); k == "q" {
				q, _ = strconv.ParseFloat(v, 64)
			}
		}
		return q > 0
	}
	return false
}
