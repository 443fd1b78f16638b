// Package bucket is the lake's storage seam: one small interface, Bucket,
// through which the lake reads, lists, writes and deletes its files, so
// that the same lake code runs on a local directory (Local, in this
// package) and on an S3-compatible object store.
//
// It is shaped like Tempo's tempodb/backend and Thanos' objstore: a flat
// space of objects named by slash-separated keys, each written whole and
// atomically, read whole (Get) or at random offsets (Open, which is what a
// Parquet reader needs), listed by prefix and deleted by name. There are
// no directories: a name's slashes only group names for List.
//
// Names are relative to the bucket's root and checked by ValidName: no
// empty, "." or ".." segment, no leading or trailing slash, no backslash
// or NUL, valid UTF-8, at most 1024 bytes. Every method returns an error
// wrapping ErrInvalidName (a *NameError) for any other name, and one
// wrapping ErrNotFound for a missing object where it has to read one.
//
// A few optional interfaces let an implementation offer what it does
// better than the general way: FileUploader (move a local file in instead
// of copying it), PrefixDeleter (remove a group of objects at once) and
// Sweeper (remove what a crash left behind). Callers test for them with a
// type assertion and fall back to the Bucket methods.
//
// The conformance tests every implementation must pass are in
// internal/bucket/buckettest.
package bucket

import (
	"context"
	"errors"
	"io"
	"iter"
	"strings"
	"time"
	"unicode/utf8"
)

// Bucket stores objects by name. Its methods are safe for concurrent use;
// every one checks ctx and returns its error once it ended.
type Bucket interface {
	// Get returns a reader of object name's whole content, which the
	// caller must close; an error wrapping ErrNotFound if there is no
	// such object.
	Get(ctx context.Context, name string) (io.ReadCloser, error)

	// Open returns object name for reads at any offset, which the caller
	// must close; an error wrapping ErrNotFound if there is no such
	// object. What reads of an Object return once its object is replaced
	// or deleted is up to the implementation (Local's go on reading the
	// content as opened).
	Open(ctx context.Context, name string) (Object, error)

	// List yields the objects whose names start with prefix ("" for
	// all), in no particular order, each once; an error ends the
	// sequence (it is yielded with a zero Attrs). The prefix is a plain
	// string prefix, so "a/b" matches "a/b/c" and "a/bc". An object being
	// uploaded is not listed until its Upload returns.
	List(ctx context.Context, prefix string) iter.Seq2[Attrs, error]

	// Upload makes the content read from r, to its end, object name,
	// replacing an object of that name. It is atomic: a reader sees the
	// old object or the new one, never a part, and when it fails the old
	// one (or none) stays. Uploading the same content under the same name
	// again is not an error; of concurrent uploads of one name, one wins
	// whole. After it returns the object survives a crash of the process
	// (and, for Local, of the machine).
	Upload(ctx context.Context, name string, r io.Reader) error

	// Delete removes object name. Deleting an object that does not exist
	// is not an error.
	Delete(ctx context.Context, name string) error
}

// Object is an object open for reads at any offset, as io.ReaderAt
// defines them: a read that reaches the end returns fewer bytes and
// io.EOF. Size is its length in bytes. Reads are safe for concurrent use.
type Object interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// Attrs describe one object found by List.
type Attrs struct {
	Name    string    // its name in the bucket
	Size    int64     // in bytes
	ModTime time.Time // when it was last uploaded
}

// FileUploader is implemented by buckets that can take a file of the local
// file system in without the caller reading it.
type FileUploader interface {
	// UploadFile makes the content of the local file at path object name,
	// with the guarantees of Upload, and takes the file over: after a nil
	// return path no longer exists. Local moves the file into place with a
	// rename when it is on the bucket's file system; another bucket
	// uploads it and removes it. After an error path may or may not exist
	// (the caller removes it).
	UploadFile(ctx context.Context, name, path string) error
}

// PrefixDeleter is implemented by buckets that can delete every object
// under a prefix as one operation.
type PrefixDeleter interface {
	// DeletePrefix deletes every object whose name starts with prefix, a
	// valid name followed by "/". Where the bucket can, a reader sees all
	// of them or none (Local renames the directory away first); where it
	// cannot, as deleting each object does, a failure can leave some.
	// Deleting a prefix with no objects is not an error.
	DeletePrefix(ctx context.Context, prefix string) error
}

// Sweeper is implemented by buckets in which a process that stops in the
// middle of a write or a delete leaves debris no reader sees: for Local,
// the temporary files of interrupted uploads and its trash.
type Sweeper interface {
	// Sweep removes the debris of interrupted operations: temporary files
	// last changed before before (an older one cannot belong to an upload
	// still under way) and what interrupted deletes left. It returns how
	// many temporary files it removed.
	Sweep(ctx context.Context, before time.Time) (int, error)
}

// ErrNotFound is wrapped by the error of a read of a missing object.
var ErrNotFound = errors.New("object not found")

// ErrInvalidName is wrapped by the error of a method given a name (or
// prefix) that ValidName refuses or the implementation reserves.
var ErrInvalidName = errors.New("invalid object name")

// NameError is the error of an invalid name: Name is the name, Reason why
// it is refused. It matches ErrInvalidName with errors.Is.
type NameError struct {
	Name   string
	Reason string
}

func (e *NameError) Error() string {
	return "object name " + quote(e.Name) + ": " + e.Reason
}

// Is reports whether target is ErrInvalidName.
func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return `"` + strings.ToValidUTF8(s, "\uFFFD") + `"`
}

// MaxNameLen is the longest name in bytes (S3's limit on a key).
const MaxNameLen = 1024

// ValidName returns nil if name can name an object, else a *NameError: a
// name is 1 to MaxNameLen bytes of valid UTF-8, without NUL or backslash,
// made of slash-separated segments none of which is empty, "." or "..".
func ValidName(name string) error {
	why := ""
	switch {
	case name == "":
		why = "empty"
	case len(name) > MaxNameLen:
		why = "longer than 1024 bytes"
	case !utf8.ValidString(name):
		why = "not valid UTF-8"
	case strings.ContainsAny(name, "\x00\\"):
		why = "contains a NUL or a backslash"
	case name[0] == '/':
		why = "absolute"
	default:
		for seg := range strings.SplitSeq(name, "/") {
			switch seg {
			case "":
				why = "has an empty segment"
			case ".", "..":
				why = `has a "." or ".." segment`
			}
			if why != "" {
				break
			}
		}
	}
	if why != "" {
		return &NameError{Name: name, Reason: why}
	}
	return nil
}

// ValidPrefix returns nil if prefix can be given to List: "", or a string
// whose part up to its last slash is a valid name and whose rest (a
// partial segment: "a/b" lists "a/bc" too) has no NUL or backslash.
func ValidPrefix(prefix string) error {
	dir, last := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir, last = prefix[:i], prefix[i+1:]
		if err := ValidName(dir); err != nil {
			return &NameError{Name: prefix, Reason: "as a prefix: " + err.(*NameError).Reason}
		}
	}
	if len(prefix) > MaxNameLen || !utf8.ValidString(last) || strings.ContainsAny(last, "\x00\\") {
		return &NameError{Name: prefix, Reason: "as a prefix: too long, not UTF-8, or with a NUL or backslash"}
	}
	return nil
}

// validDirPrefix returns nil if prefix is a valid name followed by "/", as
// DeletePrefix takes.
func validDirPrefix(prefix string) error {
	name, ok := strings.CutSuffix(prefix, "/")
	if !ok {
		return &NameError{Name: prefix, Reason: `a prefix to delete must end in "/"`}
	}
	if err := ValidName(name); err != nil {
		return &NameError{Name: prefix, Reason: "as a prefix: " + err.(*NameError).Reason}
	}
	return nil
}

// Conditional is implemented by buckets that can replace an object only
// if it is still the version the caller read: S3's conditional writes
// (If-None-Match: * to create, If-Match: <ETag> to replace), which AWS
// S3, SeaweedFS, MinIO, R2 and Ceph RGW support. Nodes sharing a bucket
// build leases on it (see internal/lease); a bucket without it (Local)
// serves one node.
type Conditional interface {
	// GetVersion returns the content of object name and its version (an
	// opaque tag, S3's ETag); an error wrapping ErrNotFound if there is
	// none.
	GetVersion(ctx context.Context, name string) (data []byte, version string, err error)

	// UploadIf makes data object name if the object's version is still
	// version, or, with version "", if there is no such object; else it
	// returns an error wrapping ErrPrecondition and changes nothing. It
	// returns the new object's version.
	UploadIf(ctx context.Context, name string, data []byte, version string) (string, error)
}

// ErrPrecondition is wrapped by the error of a Conditional.UploadIf whose
// condition does not hold: another writer came first.
var ErrPrecondition = errors.New("object changed by another writer")
