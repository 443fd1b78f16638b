package bucket_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/bucket/buckettest"
)

func TestLocalConformance(t *testing.T) {
	t.Run("synced", func(t *testing.T) {
		buckettest.Run(t, func() bucket.Bucket { return bucket.NewLocal(t.TempDir()) })
	})
	t.Run("without-sync", func(t *testing.T) {
		buckettest.Run(t, func() bucket.Bucket { return bucket.NewLocal(t.TempDir()).WithoutSync() })
	})
	t.Run("missing-root", func(t *testing.T) {
		buckettest.Run(t, func() bucket.Bucket { return bucket.NewLocal(filepath.Join(t.TempDir(), "not", "yet")) })
	})
}

// files lists the files and directories under dir, slash-separated,
// directories with a trailing slash.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			rel += "/"
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func put(t *testing.T, dir, rel string, data string, mtime time.Time) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if !mtime.IsZero() {
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLocalLayout: objects are files under the root at their names, with
// the mode a plain 0644 file gets, and no temporary file stays.
func TestLocalLayout(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(dir)
	name := "logs/tenant=a/date=2026-01-02/hour=03/x.parquet"
	if err := b.Upload(t.Context(), name, strings.NewReader("data")); err != nil {
		t.Fatal(err)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"logs/", "logs/tenant=a/", "logs/tenant=a/date=2026-01-02/", "logs/tenant=a/date=2026-01-02/hour=03/", name}) {
		t.Fatalf("files: %v", got)
	}
	p, err := b.Path(name)
	if err != nil || p != filepath.Join(dir, filepath.FromSlash(name)) {
		t.Fatalf("Path = %q, %v", p, err)
	}
	put(t, dir, "plain", "", time.Time{})
	want, _ := os.Stat(filepath.Join(dir, "plain"))
	got, _ := os.Stat(p)
	if got.Mode() != want.Mode() {
		t.Errorf("mode %v, want %v as os.WriteFile makes", got.Mode(), want.Mode())
	}
}

// TestLocalUploadFileRenames: a file on the bucket's file system is moved
// in, not copied.
func TestLocalUploadFileRenames(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(dir)
	src := filepath.Join(dir, ".scratch.1.tmp")
	put(t, dir, ".scratch.1.tmp", "content", time.Time{})
	before, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.UploadFile(t.Context(), "a/b", src); err != nil {
		t.Fatal(err)
	}
	after, err := os.Stat(filepath.Join(dir, "a", "b"))
	if err != nil || !os.SameFile(before, after) {
		t.Errorf("the file was not renamed into place: %v", err)
	}
}

// TestLocalTemporaryFiles: files named .*.tmp are not objects: List leaves
// them out, no name may be one, and Sweep removes the stale ones (and the
// directories that leaves empty) and the trash of an interrupted
// DeletePrefix.
func TestLocalTemporaryFiles(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(dir)
	now := time.Now()
	old := now.Add(-2 * time.Hour)
	put(t, dir, "p/obj", "x", time.Time{})
	put(t, dir, "p/.obj.123.tmp", "partial", old)
	put(t, dir, "p/.new.parquet.tmp", "partial", time.Time{})
	put(t, dir, ".scratch.7.tmp", "partial", old)
	put(t, dir, "q/r/.crashed.tmp", "partial", old)
	put(t, dir, bucket.TrashDir+"/p_q/obj", "deleted", time.Time{})
	var listed []string
	for a, err := range b.List(t.Context(), "") {
		if err != nil {
			t.Fatal(err)
		}
		listed = append(listed, a.Name)
	}
	if !slices.Equal(listed, []string{"p/obj"}) {
		t.Errorf("listed %v, want only the object", listed)
	}
	for _, name := range []string{"p/.obj.123.tmp", ".x.tmp", bucket.TrashDir + "/p_q/obj", bucket.TrashDir} {
		if err := b.Upload(t.Context(), name, strings.NewReader("x")); !errors.Is(err, bucket.ErrInvalidName) {
			t.Errorf("upload %s: %v, want ErrInvalidName", name, err)
		}
	}
	n, err := b.Sweep(t.Context(), now.Add(-time.Hour))
	if err != nil || n != 3 {
		t.Fatalf("Sweep = %d, %v; want the 3 stale temporary files", n, err)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"p/", "p/.new.parquet.tmp", "p/obj"}) {
		t.Errorf("after a sweep: %v", got)
	}
}

// TestLocalDeleteDirectories: Delete and DeletePrefix remove the
// directories they leave empty, up to the root but not the root, and
// DeletePrefix leaves no trash.
func TestLocalDeleteDirectories(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(dir)
	for _, n := range []string{"s/t/d1/h1/a", "s/t/d1/h2/b", "s/t/d2/h1/c", "s/t/d2/h1/sub/d", "top"} {
		if err := b.Upload(t.Context(), n, strings.NewReader(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete(t.Context(), "s/t/d1/h1/a"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeletePrefix(t.Context(), "s/t/d2/h1/"); err != nil {
		t.Fatal(err)
	}
	if got := files(t, dir); !slices.Equal(got, []string{"s/", "s/t/", "s/t/d1/", "s/t/d1/h2/", "s/t/d1/h2/b", "top"}) {
		t.Errorf("after deleting: %v", got)
	}
	for _, n := range []string{"s/t/d1/h2/b", "top"} {
		if err := b.Delete(t.Context(), n); err != nil {
			t.Fatal(err)
		}
	}
	if got := files(t, dir); len(got) != 0 {
		t.Errorf("after deleting all: %v", got)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the root was removed: %v", err)
	}
}

// TestLocalMissingRoot: a bucket whose directory does not exist is empty,
// and reading it creates nothing.
func TestLocalMissingRoot(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "lake")
	b := bucket.NewLocal(dir)
	for a, err := range b.List(t.Context(), "") {
		t.Errorf("listed %+v, %v", a, err)
	}
	if _, err := b.Get(t.Context(), "x"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("get: %v", err)
	}
	if err := b.Delete(t.Context(), "x/y"); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := b.DeletePrefix(t.Context(), "x/"); err != nil {
		t.Errorf("delete prefix: %v", err)
	}
	if n, err := b.Sweep(t.Context(), time.Now()); n != 0 || err != nil {
		t.Errorf("sweep: %d, %v", n, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the root was created: %v", err)
	}
}

// TestLocalBlockedDirectory: an upload where a file blocks a directory of
// the name fails and leaves nothing behind.
func TestLocalBlockedDirectory(t *testing.T) {
	dir := t.TempDir()
	b := bucket.NewLocal(dir)
	put(t, dir, "logs", "", time.Time{})
	if err := b.Upload(t.Context(), "logs/x", strings.NewReader("x")); err == nil {
		t.Fatal("upload under a file succeeded")
	}
	src := filepath.Join(t.TempDir(), "f")
	put(t, filepath.Dir(src), "f", "x", time.Time{})
	if err := b.UploadFile(t.Context(), "logs/y", src); err == nil {
		t.Fatal("upload file under a file succeeded")
	}
	if got := files(t, dir); !slices.Equal(got, []string{"logs"}) {
		t.Errorf("files: %v", got)
	}
}

// TestLocalEmptyDir: NewLocal("") holds nothing and never touches the
// working directory.
func TestLocalEmptyDir(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd)
	put(t, cwd, "a/b", "x", time.Time{})
	put(t, cwd, ".stale.tmp", "x", time.Now().Add(-48*time.Hour))
	b := bucket.NewLocal("")
	for a, err := range b.List(t.Context(), "") {
		t.Errorf("listed %+v, %v", a, err)
	}
	if _, err := b.Get(t.Context(), "a/b"); !errors.Is(err, bucket.ErrNotFound) {
		t.Errorf("get: %v", err)
	}
	if err := b.Upload(t.Context(), "c", strings.NewReader("x")); err == nil {
		t.Error("upload succeeded")
	}
	if err := b.Delete(t.Context(), "a/b"); err != nil {
		t.Errorf("delete: %v", err)
	}
	if err := b.DeletePrefix(t.Context(), "a/"); err != nil {
		t.Errorf("delete prefix: %v", err)
	}
	if n, err := b.Sweep(t.Context(), time.Now()); n != 0 || err != nil {
		t.Errorf("sweep: %d, %v", n, err)
	}
	if got := files(t, cwd); !slices.Equal(got, []string{".stale.tmp", "a/", "a/b"}) {
		t.Errorf("the working directory changed: %v", got)
	}
}

// TestLocalModified: a directory's time changes when a name is added
// under it or removed; a prefix that is no directory prefix, or of no
// directory, is an error. Subdirs gives a prefix's directories.
func TestLocalModified(t *testing.T) {
	ctx := context.Background()
	l := bucket.NewLocal(t.TempDir())
	if err := l.Upload(ctx, "a/b/one", strings.NewReader("1")); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(l.Dir(), "a", "b"), old, old); err != nil {
		t.Fatal(err)
	}
	m0, err := l.Modified(ctx, "a/b/")
	if err != nil || !m0.Equal(old) {
		t.Fatalf("Modified: %v, %v; want %v", m0, err, old)
	}
	if err := l.Upload(ctx, "a/b/two", strings.NewReader("2")); err != nil {
		t.Fatal(err)
	}
	m1, err := l.Modified(ctx, "a/b/")
	if err != nil || !m1.After(m0) {
		t.Fatalf("after an upload: %v, %v; want after %v", m1, err, m0)
	}
	if _, err := l.Modified(ctx, "a/b"); err == nil {
		t.Error("a prefix without a slash: no error")
	}
	if _, err := l.Modified(ctx, "a/c/"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory: %v, want fs.ErrNotExist", err)
	}
	if err := l.Upload(ctx, "a/d/three", strings.NewReader("3")); err != nil {
		t.Fatal(err)
	}
	if got, err := l.Subdirs(ctx, "a/"); err != nil || !slices.Equal(got, []string{"b", "d"}) {
		t.Errorf("Subdirs(a/): %q, %v; want [b d]", got, err)
	}
	if got, err := l.Subdirs(ctx, "a/b/"); err != nil || len(got) != 0 {
		t.Errorf("Subdirs(a/b/), files only: %q, %v", got, err)
	}
	if got, err := l.Subdirs(ctx, "x/"); err != nil || got != nil {
		t.Errorf("Subdirs of a missing directory: %q, %v", got, err)
	}
}
