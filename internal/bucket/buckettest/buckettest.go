// Package buckettest is the conformance suite of bucket.Bucket: Run checks
// that an implementation keeps the interface's promises (whole and ranged
// reads, prefix listing that never shows a partial upload, atomic and
// idempotent uploads, idempotent deletes, name validation, contexts), and
// those of the optional interfaces it implements. Every implementation's
// tests call Run.
package buckettest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Run runs the suite, each case on a new empty bucket from newBucket.
func Run(t *testing.T, newBucket func() bucket.Bucket) {
	cases := []struct {
		name string
		fn   func(*testing.T, bucket.Bucket)
	}{
		{"upload-get", testUploadGet},
		{"open-ranged", testOpenRanged},
		{"not-found", testNotFound},
		{"replace", testReplace},
		{"failed-upload", testFailedUpload},
		{"list", testList},
		{"list-hides-uploads-under-way", testListDuringUpload},
		{"list-stops-early", testListStop},
		{"delete", testDelete},
		{"invalid-names", testInvalidNames},
		{"concurrent-same-name", testConcurrentSameName},
		{"ended-context", testEndedContext},
		{"upload-file", testUploadFile},
		{"delete-prefix", testDeletePrefix},
		{"sweep", testSweep},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { c.fn(t, newBucket()) })
	}
}

// upload uploads data as name or fails the test.
func upload(t *testing.T, b bucket.Bucket, name string, data []byte) {
	t.Helper()
	if err := b.Upload(t.Context(), name, bytes.NewReader(data)); err != nil {
		t.Fatalf("upload %s: %v", name, err)
	}
}

// get reads object name whole or fails the test.
func get(t *testing.T, b bucket.Bucket, name string) []byte {
	t.Helper()
	r, err := b.Get(t.Context(), name)
	if err != nil {
		t.Fatalf("get %s: %v", name, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return data
}

// list lists prefix or fails the test: its attributes by name.
func list(t *testing.T, b bucket.Bucket, prefix string) map[string]bucket.Attrs {
	t.Helper()
	out := map[string]bucket.Attrs{}
	for a, err := range b.List(t.Context(), prefix) {
		if err != nil {
			t.Fatalf("list %q: %v", prefix, err)
		}
		if _, dup := out[a.Name]; dup {
			t.Errorf("list %q: %s yielded twice", prefix, a.Name)
		}
		out[a.Name] = a
	}
	return out
}

func names(m map[string]bucket.Attrs) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// pattern is n bytes that differ at every offset modulo 251.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i % 251)
	}
	return b
}

func testUploadGet(t *testing.T, b bucket.Bucket) {
	for _, c := range []struct {
		name string
		size int
	}{
		{"flat", 10},
		{"a/b/c/nested", 100},
		{"logs/tenant=acme/date=2030-05-01/hour=10/00000000000000000001-00000000000000000005-c2.parquet", 1000},
		{"a/.hidden", 3},
		{"with space/ünïcode", 7},
		{"empty", 0},
		{"big", 1<<20 + 17},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := pattern(c.size)
			upload(t, b, c.name, data)
			if got := get(t, b, c.name); !bytes.Equal(got, data) {
				t.Fatalf("get returned %d bytes, want the %d uploaded", len(got), len(data))
			}
			o, err := b.Open(t.Context(), c.name)
			if err != nil {
				t.Fatal(err)
			}
			defer o.Close()
			if o.Size() != int64(c.size) {
				t.Errorf("size %d, want %d", o.Size(), c.size)
			}
			a, ok := list(t, b, c.name)[c.name]
			if !ok || a.Size != int64(c.size) || a.ModTime.IsZero() {
				t.Errorf("listed as %+v (%v), want size %d and a time", a, ok, c.size)
			}
		})
	}
}

func testOpenRanged(t *testing.T, b bucket.Bucket) {
	const size = 10000
	data := pattern(size)
	upload(t, b, "obj", data)
	o, err := b.Open(t.Context(), "obj")
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	if o.Size() != size {
		t.Fatalf("size %d, want %d", o.Size(), size)
	}
	for _, c := range []struct {
		name   string
		off    int64
		len, n int
		eof    bool // io.EOF required
	}{
		{"start", 0, 10, 10, false},
		{"middle", 5000, 100, 100, false},
		{"to-the-end", size - 10, 10, 10, false}, // EOF allowed, not required
		{"across-the-end", size - 5, 10, 5, true},
		{"at-the-end", size, 1, 0, true},
		{"past-the-end", 2 * size, 1, 0, true},
		{"whole", 0, size, size, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := make([]byte, c.len)
			n, err := o.ReadAt(p, c.off)
			if n != c.n || c.eof && err != io.EOF || !c.eof && err != nil && err != io.EOF {
				t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; want %d (EOF %v)", c.len, c.off, n, err, c.n, c.eof)
			}
			if n < c.len && err == nil {
				t.Fatalf("short ReadAt without an error")
			}
			if n > 0 && !bytes.Equal(p[:n], data[c.off:c.off+int64(n)]) {
				t.Fatalf("ReadAt at %d returned other bytes", c.off)
			}
		})
	}
	t.Run("negative-offset", func(t *testing.T) {
		if n, err := o.ReadAt(make([]byte, 1), -1); err == nil {
			t.Fatalf("ReadAt at -1 = %d, nil", n)
		}
	})
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				off := int64(i * 1000)
				p := make([]byte, 1000)
				if n, err := o.ReadAt(p, off); n != 1000 || err != nil && err != io.EOF || !bytes.Equal(p, data[off:off+1000]) {
					t.Errorf("concurrent ReadAt at %d = %d, %v", off, n, err)
				}
			})
		}
		wg.Wait()
	})
}

func testNotFound(t *testing.T, b bucket.Bucket) {
	upload(t, b, "dir/obj", []byte("x"))
	for _, name := range []string{"missing", "dir", "dir/missing", "dir/obj/below", "di"} {
		t.Run(name, func(t *testing.T) {
			if r, err := b.Get(t.Context(), name); !errors.Is(err, bucket.ErrNotFound) {
				if err == nil {
					r.Close()
				}
				t.Errorf("get: %v, want ErrNotFound", err)
			}
			if o, err := b.Open(t.Context(), name); !errors.Is(err, bucket.ErrNotFound) {
				if err == nil {
					o.Close()
				}
				t.Errorf("open: %v, want ErrNotFound", err)
			}
		})
	}
}

func testReplace(t *testing.T, b bucket.Bucket) {
	upload(t, b, "a/obj", []byte("the first content, longer"))
	upload(t, b, "a/obj", []byte("second"))
	if got := get(t, b, "a/obj"); string(got) != "second" {
		t.Fatalf("after replacing: %q", got)
	}
	upload(t, b, "a/obj", []byte("second")) // again: idempotent
	if got := get(t, b, "a/obj"); string(got) != "second" {
		t.Fatalf("after uploading again: %q", got)
	}
	if l := list(t, b, ""); len(l) != 1 || l["a/obj"].Size != 6 {
		t.Fatalf("list after replacing: %v", l)
	}
}

// failingReader returns data, then err.
type failingReader struct {
	data []byte
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func testFailedUpload(t *testing.T, b bucket.Bucket) {
	boom := errors.New("boom")
	upload(t, b, "kept", []byte("old"))
	if err := b.Upload(t.Context(), "kept", &failingReader{pattern(100000), boom}); !errors.Is(err, boom) {
		t.Fatalf("upload from a failing reader: %v, want the reader's error", err)
	}
	if got := get(t, b, "kept"); string(got) != "old" {
		t.Errorf("a failed upload changed the object: %d bytes", len(got))
	}
	if err := b.Upload(t.Context(), "new/obj", &failingReader{pattern(100000), boom}); !errors.Is(err, boom) {
		t.Fatalf("upload from a failing reader: %v, want the reader's error", err)
	}
	if _, err := b.Get(t.Context(), "new/obj"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("a failed upload left an object: %v", err)
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{"kept"}) {
		t.Errorf("list after failed uploads: %v", got)
	}
}

func testList(t *testing.T, b bucket.Bucket) {
	start := time.Now()
	all := []string{"a/1", "a/2", "a/b/3", "ab/4", "b", "a/.h", "x/y/z/deep"}
	for i, n := range all {
		upload(t, b, n, pattern(i+1))
	}
	for _, c := range []struct {
		prefix string
		want   []string
	}{
		{"", all},
		{"a/", []string{"a/.h", "a/1", "a/2", "a/b/3"}},
		{"a", []string{"a/.h", "a/1", "a/2", "a/b/3", "ab/4"}},
		{"a/b", []string{"a/b/3"}},
		{"a/b/", []string{"a/b/3"}},
		{"a/.", []string{"a/.h"}},
		{"ab/4", []string{"ab/4"}},
		{"x/", []string{"x/y/z/deep"}},
		{"c", nil},
		{"c/d/", nil},
		{"b/", nil},
	} {
		t.Run("prefix="+c.prefix, func(t *testing.T) {
			got := list(t, b, c.prefix)
			want := slices.Sorted(slices.Values(c.want))
			if !slices.Equal(names(got), want) {
				t.Fatalf("list %q = %v, want %v", c.prefix, names(got), want)
			}
			for _, a := range got {
				i := slices.Index(all, a.Name)
				if a.Size != int64(i+1) {
					t.Errorf("%s: size %d, want %d", a.Name, a.Size, i+1)
				}
				// Allow for a store's clock that differs from ours.
				if a.ModTime.Before(start.Add(-time.Hour)) || a.ModTime.After(time.Now().Add(time.Hour)) {
					t.Errorf("%s: modification time %v, uploaded at %v", a.Name, a.ModTime, start)
				}
			}
		})
	}
}

func testListDuringUpload(t *testing.T, b bucket.Bucket) {
	upload(t, b, "p/done", []byte("x"))
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- b.Upload(t.Context(), "p/slow", pr) }()
	// The upload has consumed this much once Write returns.
	if _, err := pw.Write(pattern(64 << 10)); err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{"", "p/", "p/slow"} {
		for a, err := range b.List(t.Context(), prefix) {
			if err != nil {
				t.Fatal(err)
			}
			if a.Name != "p/done" {
				t.Errorf("list %q during an upload yields %+v", prefix, a)
			}
		}
	}
	if _, err := b.Get(t.Context(), "p/slow"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("get during the upload: %v, want ErrNotFound", err)
	}
	if _, err := pw.Write(pattern(1000)); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{"p/done", "p/slow"}) {
		t.Errorf("list after the upload: %v", got)
	}
	if got := get(t, b, "p/slow"); len(got) != 64<<10+1000 {
		t.Errorf("got %d bytes", len(got))
	}
}

func testListStop(t *testing.T, b bucket.Bucket) {
	for i := range 5 {
		upload(t, b, fmt.Sprintf("d%d/o", i), nil)
	}
	n := 0
	for _, err := range b.List(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		n++
		if n == 2 {
			break
		}
	}
	if n != 2 {
		t.Fatalf("%d yielded", n)
	}
}

func testDelete(t *testing.T, b bucket.Bucket) {
	upload(t, b, "a/b/one", []byte("1"))
	upload(t, b, "a/b/two", []byte("2"))
	upload(t, b, "a/c", []byte("3"))
	for _, name := range []string{"a/b/one", "a/b/one", "never", "a", "a/b", "zz/yy/xx"} {
		if err := b.Delete(t.Context(), name); err != nil {
			t.Errorf("delete %s: %v", name, err)
		}
	}
	if _, err := b.Get(t.Context(), "a/b/one"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("get after delete: %v", err)
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{"a/b/two", "a/c"}) {
		t.Errorf("after deleting: %v", got)
	}
	for _, name := range []string{"a/b/two", "a/c"} {
		if err := b.Delete(t.Context(), name); err != nil {
			t.Fatal(err)
		}
	}
	if got := list(t, b, ""); len(got) != 0 {
		t.Errorf("after deleting all: %v", names(got))
	}
	upload(t, b, "a/b/again", []byte("4")) // where a delete left nothing
	if got := get(t, b, "a/b/again"); string(got) != "4" {
		t.Errorf("got %q", got)
	}
}

// InvalidNames are names every Bucket must refuse.
var InvalidNames = []string{
	"", "/abs", "/", "a//b", "a/", "../x", "a/../b", "./a", "a/./b", ".", "..",
	"a/..", "a\x00b", `a\b`, "\xff\xfe", strings.Repeat("n", bucket.MaxNameLen+1),
}

func testInvalidNames(t *testing.T, b bucket.Bucket) {
	ctx := t.Context()
	for _, name := range InvalidNames {
		t.Run(fmt.Sprintf("%.20q", name), func(t *testing.T) {
			if err := bucket.ValidName(name); !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("ValidName: %v", err)
			}
			if err := b.Upload(ctx, name, strings.NewReader("x")); !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("upload: %v", err)
			}
			if _, err := b.Get(ctx, name); !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("get: %v", err)
			}
			if _, err := b.Open(ctx, name); !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("open: %v", err)
			}
			if err := b.Delete(ctx, name); !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("delete: %v", err)
			}
			var ne *bucket.NameError
			if err := b.Delete(ctx, name); !errors.As(err, &ne) || ne.Name != name {
				t.Errorf("delete: %v, want a *NameError naming it", err)
			}
		})
	}
	for _, prefix := range []string{"/a", "a//", "../", "a/../", "a\x00"} {
		t.Run(fmt.Sprintf("prefix=%q", prefix), func(t *testing.T) {
			var err error
			for _, err = range b.List(ctx, prefix) {
				if err != nil {
					break
				}
			}
			if !errors.Is(err, bucket.ErrInvalidName) {
				t.Errorf("list: %v", err)
			}
		})
	}
	if got := list(t, b, ""); len(got) != 0 {
		t.Errorf("invalid names made objects: %v", names(got))
	}
}

func testConcurrentSameName(t *testing.T, b bucket.Bucket) {
	const writers, rounds, size = 6, 4, 64 << 10
	var wg sync.WaitGroup
	stop := make(chan struct{})
	readerDone := make(chan struct{})
	go func() { // every read sees one upload whole, or none
		defer close(readerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			r, err := b.Get(t.Context(), "same")
			if errors.Is(err, bucket.ErrNotFound) {
				continue
			}
			if err != nil {
				t.Errorf("get during uploads: %v", err)
				return
			}
			data, err := io.ReadAll(r)
			r.Close()
			if err != nil || !uniform(data, size) {
				t.Errorf("get during uploads: %d bytes, %v: not one upload whole", len(data), err)
				return
			}
		}
	}()
	for w := range writers {
		wg.Go(func() {
			data := bytes.Repeat([]byte{byte('a' + w)}, size)
			for range rounds {
				if err := b.Upload(t.Context(), "same", bytes.NewReader(data)); err != nil {
					t.Errorf("concurrent upload: %v", err)
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-readerDone
	if got := get(t, b, "same"); !uniform(got, size) {
		t.Errorf("after concurrent uploads: %d bytes, not one upload whole", len(got))
	}
	if l := list(t, b, ""); len(l) != 1 || l["same"].Size != size {
		t.Errorf("list after concurrent uploads: %v", l)
	}
}

// uniform reports whether data is size copies of one byte.
func uniform(data []byte, size int) bool {
	return len(data) == size && bytes.Count(data, data[:1]) == size
}

func testEndedContext(t *testing.T, b bucket.Bucket) {
	upload(t, b, "obj", []byte("x"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := b.Upload(ctx, "new", strings.NewReader("y")); !errors.Is(err, context.Canceled) {
		t.Errorf("upload: %v", err)
	}
	if _, err := b.Get(ctx, "obj"); !errors.Is(err, context.Canceled) {
		t.Errorf("get: %v", err)
	}
	if _, err := b.Open(ctx, "obj"); !errors.Is(err, context.Canceled) {
		t.Errorf("open: %v", err)
	}
	if err := b.Delete(ctx, "obj"); !errors.Is(err, context.Canceled) {
		t.Errorf("delete: %v", err)
	}
	var err error
	for _, err = range b.List(ctx, "") {
		if err != nil {
			break
		}
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("list: %v", err)
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{"obj"}) {
		t.Errorf("after calls with an ended context: %v", got)
	}
}

func testUploadFile(t *testing.T, b bucket.Bucket) {
	fu, ok := b.(bucket.FileUploader)
	if !ok {
		t.Skip("not a bucket.FileUploader")
	}
	write := func(data []byte) string {
		t.Helper()
		f, err := os.CreateTemp(t.TempDir(), "upload")
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		return f.Name()
	}
	for i, data := range [][]byte{pattern(3000), []byte("replaced")} {
		p := write(data)
		if err := fu.UploadFile(t.Context(), "f/obj", p); err != nil {
			t.Fatalf("upload file %d: %v", i, err)
		}
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the uploaded file is still there: %v", err)
		}
		if got := get(t, b, "f/obj"); !bytes.Equal(got, data) {
			t.Errorf("upload file %d: got %d bytes, want %d", i, len(got), len(data))
		}
	}
	if err := fu.UploadFile(t.Context(), "f/obj", filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("upload of a missing file succeeded")
	}
	if got := get(t, b, "f/obj"); string(got) != "replaced" {
		t.Errorf("a failed upload file changed the object: %q", got)
	}
	if err := fu.UploadFile(t.Context(), "../x", write(nil)); !errors.Is(err, bucket.ErrInvalidName) {
		t.Errorf("upload file as ../x: %v", err)
	}
}

func testDeletePrefix(t *testing.T, b bucket.Bucket) {
	pd, ok := b.(bucket.PrefixDeleter)
	if !ok {
		t.Skip("not a bucket.PrefixDeleter")
	}
	for _, n := range []string{"p/a", "p/b/c", "p/.h", "pq/x", "q", "r/p/a"} {
		upload(t, b, n, []byte(n))
	}
	for _, prefix := range []string{"p/", "p/", "none/", "q/", "x/y/"} {
		if err := pd.DeletePrefix(t.Context(), prefix); err != nil {
			t.Errorf("delete prefix %q: %v", prefix, err)
		}
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{"pq/x", "q", "r/p/a"}) {
		t.Errorf("after deleting p/: %v", got)
	}
	for _, prefix := range []string{"", "/", "p", "a//", "../"} {
		if err := pd.DeletePrefix(t.Context(), prefix); !errors.Is(err, bucket.ErrInvalidName) {
			t.Errorf("delete prefix %q: %v, want ErrInvalidName", prefix, err)
		}
	}
	upload(t, b, "p/again", []byte("x"))
	if got := get(t, b, "p/again"); string(got) != "x" {
		t.Errorf("got %q", got)
	}
}

func testSweep(t *testing.T, b bucket.Bucket) {
	s, ok := b.(bucket.Sweeper)
	if !ok {
		t.Skip("not a bucket.Sweeper")
	}
	upload(t, b, "a/b", []byte("x"))
	upload(t, b, ".c", []byte("y"))
	// Even with every temporary file stale, no object is debris.
	if _, err := s.Sweep(t.Context(), time.Now().Add(24*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := names(list(t, b, "")); !slices.Equal(got, []string{".c", "a/b"}) {
		t.Errorf("after a sweep: %v", got)
	}
}
