package bucket

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/wirehouse/wirehouse/internal/durable"
)

// TrashDir is the directory under a Local bucket's root where DeletePrefix
// moves a directory before removing it, and whose leftovers Sweep removes.
// No object name may start with it.
const TrashDir = ".trash"

// Local is a Bucket on a directory of the local file system: object a/b/c
// is the file <dir>/a/b/c, directories are made as needed, and Delete and
// DeletePrefix remove the directories they leave empty (but never dir
// itself). Since a file cannot also be a directory, "a" and "a/b" cannot
// both be objects. Only regular files are objects: List leaves out
// anything else.
//
// Upload writes a temporary file in the object's directory, fsyncs it,
// renames it over the object and fsyncs the directory; UploadFile renames
// the given file into place the same way, copying it only when it is on
// another file system. A temporary file is named .<base>.<random>.tmp;
// every file whose name starts with "." and ends in ".tmp" is taken for
// one: List leaves it out, Sweep removes it once stale, and no object name
// may end in such a segment. So a caller can keep scratch files in dir
// itself, under such names, and have UploadFile move them in with one
// rename.
//
// NewLocal creates nothing: a missing dir is an empty bucket until the
// first Upload. NewLocal("") holds nothing and refuses uploads (it is not
// the working directory).
type Local struct {
	dir    string
	noSync bool
}

var (
	_ Bucket        = (*Local)(nil)
	_ FileUploader  = (*Local)(nil)
	_ PrefixDeleter = (*Local)(nil)
	_ Sweeper       = (*Local)(nil)
)

// NewLocal returns the bucket of the files under dir.
func NewLocal(dir string) *Local {
	if dir != "" {
		dir = filepath.Clean(dir)
	}
	return &Local{dir: dir}
}

// errNoDir is the error of an upload to NewLocal("").
var errNoDir = errors.New("local bucket without a directory")

// WithoutSync returns a Local on the same directory that skips every
// fsync: what it writes survives a crash of the process but may be lost or
// torn by one of the machine. It is for tests and throwaway lakes.
func (l *Local) WithoutSync() *Local { return &Local{dir: l.dir, noSync: true} }

// Dir is the bucket's root directory.
func (l *Local) Dir() string { return l.dir }

// Path returns the file of object name, or a *NameError if name is not
// valid or is reserved by Local (a temporary file's, or under TrashDir).
func (l *Local) Path(name string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	if first, _, _ := strings.Cut(name, "/"); first == TrashDir {
		return "", &NameError{Name: name, Reason: "under " + TrashDir + ", reserved by the local bucket"}
	}
	if isTemp(name[strings.LastIndexByte(name, '/')+1:]) {
		return "", &NameError{Name: name, Reason: `ends in ".*.tmp", reserved for the local bucket's temporary files`}
	}
	return filepath.Join(l.dir, filepath.FromSlash(name)), nil
}

// isTemp reports whether a file name is of a temporary file.
func isTemp(base string) bool {
	return strings.HasPrefix(base, ".") && strings.HasSuffix(base, ".tmp")
}

// path checks ctx and name for method op.
func (l *Local) path(ctx context.Context, op, name string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("%s %s: %w", op, name, err)
	}
	p, err := l.Path(name)
	if err != nil {
		return "", fmt.Errorf("%s: %w", op, err)
	}
	if l.dir == "" {
		return "", fmt.Errorf("%s %s: %w", op, name, errNoDir)
	}
	return p, nil
}

// notFound reports whether err says a file is not there: missing, or a
// file where a directory of its path should be.
func notFound(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// open opens the regular file of object name.
func (l *Local) open(ctx context.Context, op, name string) (*os.File, int64, error) {
	p, err := l.path(ctx, op, name)
	if errors.Is(err, errNoDir) {
		return nil, 0, fmt.Errorf("%s %s: %w", op, name, ErrNotFound)
	}
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if notFound(err) {
		return nil, 0, fmt.Errorf("%s %s: %w", op, name, ErrNotFound)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("%s %s: %w", op, name, err)
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = ErrNotFound // a directory: a prefix, not an object
	}
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("%s %s: %w", op, name, err)
	}
	return f, st.Size(), nil
}

// Get implements Bucket.
func (l *Local) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	f, _, err := l.open(ctx, "get", name)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// Open implements Bucket.
func (l *Local) Open(ctx context.Context, name string) (Object, error) {
	f, size, err := l.open(ctx, "open", name)
	if err != nil {
		return nil, err
	}
	return &localObject{f: f, size: size}, nil
}

// localObject is an open file of a Local bucket.
type localObject struct {
	f    *os.File
	size int64
}

func (o *localObject) ReadAt(p []byte, off int64) (int, error) { return o.f.ReadAt(p, off) }
func (o *localObject) Close() error                            { return o.f.Close() }
func (o *localObject) Size() int64                             { return o.size }

// walkRoot is the directory to walk for names under rel ("" for all): a
// trailing separator makes a symbolic link to a directory walked too.
func (l *Local) walkRoot(rel string) string {
	return filepath.Join(l.dir, filepath.FromSlash(rel)) + string(filepath.Separator)
}

// Modified returns the modification time of the directory of the names
// under prefix (which ends in "/"): a name added, renamed or removed
// there changes it, to the file system's granularity. A missing
// directory is an error (fs.ErrNotExist).
func (l *Local) Modified(ctx context.Context, prefix string) (time.Time, error) {
	if err := ValidPrefix(prefix); err != nil || !strings.HasSuffix(prefix, "/") {
		return time.Time{}, fmt.Errorf("modified %q: not a directory prefix", prefix)
	}
	if err := ctx.Err(); err != nil {
		return time.Time{}, fmt.Errorf("modified %q: %w", prefix, err)
	}
	fi, err := os.Stat(l.walkRoot(strings.TrimSuffix(prefix, "/")))
	if err != nil {
		return time.Time{}, fmt.Errorf("modified %q: %w", prefix, err)
	}
	return fi.ModTime(), nil
}

// Subdirs returns the names of the directories right under prefix
// (which ends in "/"), sorted; none if it is no directory.
func (l *Local) Subdirs(ctx context.Context, prefix string) ([]string, error) {
	if err := ValidPrefix(prefix); err != nil || !strings.HasSuffix(prefix, "/") {
		return nil, fmt.Errorf("subdirs %q: not a directory prefix", prefix)
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("subdirs %q: %w", prefix, err)
	}
	ents, err := os.ReadDir(l.walkRoot(strings.TrimSuffix(prefix, "/")))
	if notFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("subdirs %q: %w", prefix, err)
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// List implements Bucket. It walks only the directories that can hold
// names with the prefix.
func (l *Local) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		if err := ValidPrefix(prefix); err != nil {
			yield(Attrs{}, fmt.Errorf("list: %w", err))
			return
		}
		if err := ctx.Err(); err != nil {
			yield(Attrs{}, fmt.Errorf("list %q: %w", prefix, err))
			return
		}
		if l.dir == "" {
			return
		}
		start := ""
		if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
			start = prefix[:i]
		}
		root := l.walkRoot(start)
		stopped := false
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if notFound(err) {
					if p == root {
						return fs.SkipAll // nothing under the prefix
					}
					return nil // removed while listed
				}
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if p == root {
				return nil
			}
			rel, err := filepath.Rel(l.dir, p)
			if err != nil {
				return err
			}
			rel = filepath.ToSlash(rel)
			if d.IsDir() {
				if rel == TrashDir || !strings.HasPrefix(rel+"/", prefix) && !strings.HasPrefix(prefix, rel+"/") {
					return fs.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || isTemp(d.Name()) || !strings.HasPrefix(rel, prefix) {
				return nil
			}
			info, err := d.Info()
			if notFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if !yield(Attrs{Name: rel, Size: info.Size(), ModTime: info.ModTime()}, nil) {
				stopped = true
				return fs.SkipAll
			}
			return nil
		})
		if err != nil && !stopped {
			yield(Attrs{}, fmt.Errorf("list %q: %w", prefix, err))
		}
	}
}

// Upload implements Bucket.
func (l *Local) Upload(ctx context.Context, name string, r io.Reader) error {
	p, err := l.path(ctx, "upload", name)
	if err != nil {
		return err
	}
	f, tmp, err := createTemp(p)
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	_, err = io.Copy(f, ctxReader{ctx, r})
	if err == nil && !l.noSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("upload %s: %w", name, err)
	}
	return l.syncDir("upload", name, filepath.Dir(p))
}

// createTemp creates a temporary file for file p in its directory, making
// the directory if needed.
func createTemp(p string) (*os.File, string, error) {
	dir, base := filepath.Split(p)
	for try := 0; ; try++ {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, "", err
		}
		tmp := filepath.Join(dir, "."+base+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			return f, tmp, nil
		}
		// The directory was removed by a Delete that found it empty, or
		// (hardly) the random name is taken: try again.
		if try == 3 || !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrExist) {
			return nil, "", err
		}
	}
}

// ctxReader ends a copy once its context ended.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// syncDir fsyncs dir after method op changed name in it.
func (l *Local) syncDir(op, name, dir string) error {
	if l.noSync {
		return nil
	}
	if err := durable.SyncDir(dir); err != nil {
		return fmt.Errorf("%s %s: %w", op, name, err)
	}
	return nil
}

// UploadFile implements FileUploader: it fsyncs the file and renames it
// into place, or, from another file system, copies it with Upload and
// removes it.
func (l *Local) UploadFile(ctx context.Context, name, path string) error {
	p, err := l.path(ctx, "upload", name)
	if err != nil {
		return err
	}
	if !l.noSync {
		if err := syncFile(path); err != nil {
			return fmt.Errorf("upload %s: %w", name, err)
		}
	}
	dir := filepath.Dir(p)
	for try := 0; ; try++ {
		if err = os.MkdirAll(dir, 0o755); err != nil {
			break
		}
		err = os.Rename(path, p)
		if err == nil || try == 3 || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if _, serr := os.Lstat(path); serr != nil {
			break // the file is missing, not the directory
		}
	}
	if errors.Is(err, syscall.EXDEV) {
		return l.copyFile(ctx, name, path)
	}
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	return l.syncDir("upload", name, dir)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// copyFile uploads the file at path as name and removes it.
func (l *Local) copyFile(ctx context.Context, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("upload %s: %w", name, err)
	}
	err = l.Upload(ctx, name, f)
	f.Close()
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("upload %s: remove the uploaded file: %w", name, err)
	}
	return nil
}

// Delete implements Bucket.
func (l *Local) Delete(ctx context.Context, name string) error {
	p, err := l.path(ctx, "delete", name)
	if errors.Is(err, errNoDir) {
		return nil
	}
	if err != nil {
		return err
	}
	st, err := os.Lstat(p)
	if notFound(err) || err == nil && st.IsDir() {
		return nil // no such object (a directory is only a prefix)
	}
	if err == nil {
		err = os.Remove(p)
	}
	if notFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	dir := filepath.Dir(p)
	if err := l.syncDir("delete", name, dir); err != nil {
		return err
	}
	l.removeEmpty(dir)
	return nil
}

// removeEmpty removes dir and its parents below the root while they are
// empty. A directory an Upload is about to use may be removed: Upload
// makes it again.
func (l *Local) removeEmpty(dir string) {
	for {
		rel, err := filepath.Rel(l.dir, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return
		}
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// DeletePrefix implements PrefixDeleter: it renames the directory of the
// prefix into TrashDir, whole, so that no reader sees part of it, then
// removes it there and the directories that leaves empty. After a crash
// Sweep removes what is left in the trash.
func (l *Local) DeletePrefix(ctx context.Context, prefix string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete %s: %w", prefix, err)
	}
	if err := validDirPrefix(prefix); err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	rel := strings.TrimSuffix(prefix, "/")
	dir, err := l.Path(rel)
	if err != nil {
		return fmt.Errorf("delete: %w", err)
	}
	if l.dir == "" {
		return nil
	}
	st, err := os.Lstat(dir)
	if notFound(err) || err == nil && !st.IsDir() {
		return nil // no objects under it
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", prefix, err)
	}
	trash := filepath.Join(l.dir, TrashDir)
	dst := filepath.Join(trash, strings.ReplaceAll(rel, "/", "_"))
	if err := os.RemoveAll(dst); err != nil { // an interrupted delete's
		return fmt.Errorf("delete %s: %w", prefix, err)
	}
	for try := 0; ; try++ {
		if err = os.MkdirAll(trash, 0o755); err != nil {
			break
		}
		err = os.Rename(dir, dst)
		if err == nil || try == 3 || !errors.Is(err, fs.ErrNotExist) {
			break
		}
		if _, serr := os.Lstat(dir); notFound(serr) {
			return nil // deleted meanwhile
		}
	}
	if err != nil {
		return fmt.Errorf("delete %s: %w", prefix, err)
	}
	if err := os.RemoveAll(dst); err != nil {
		return fmt.Errorf("delete %s: %w", prefix, err)
	}
	l.removeEmpty(filepath.Dir(dir))
	os.Remove(trash) // if empty
	return nil
}

// Sweep implements Sweeper: it removes TrashDir and every temporary file
// (.*.tmp) last modified before before, and the directories that leaves
// empty.
func (l *Local) Sweep(ctx context.Context, before time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	if l.dir == "" {
		return 0, nil
	}
	if err := os.RemoveAll(filepath.Join(l.dir, TrashDir)); err != nil {
		return 0, fmt.Errorf("sweep: %w", err)
	}
	n := 0
	root := l.walkRoot("")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if notFound(err) {
				if p == root {
					return fs.SkipAll
				}
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() || !d.Type().IsRegular() || !isTemp(d.Name()) {
			return nil
		}
		info, err := d.Info()
		if notFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		if info.ModTime().Before(before) && os.Remove(p) == nil {
			n++
			l.removeEmpty(filepath.Dir(p))
		}
		return nil
	})
	if err != nil {
		return n, fmt.Errorf("sweep: %w", err)
	}
	return n, nil
}
