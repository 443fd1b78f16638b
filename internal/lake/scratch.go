package lake

import (
	"context"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// Scratch files. The lake encodes every Parquet file it writes, a flush's
// or a merge's, into a file of a local scratch directory, then hands the
// finished file to its bucket: a bucket.FileUploader takes it over (the
// local bucket renames it into place), any other bucket reads it with
// Upload. For a lake on a directory the scratch directory is that root
// directory itself, so a file reaches its partition with one rename, as
// it always did.
//
// A scratch file is named .<file>.<random>.tmp, a name the local bucket
// takes for a temporary file of its own: List never shows it and Prune
// (bucket.Sweeper) removes one a crash left once it is an hour old. The
// functions of this file are the lake's only file system calls outside
// tests: everything else goes through the bucket.

// scratchDir is dir, or os.TempDir() for "".
func scratchDir(dir string) string {
	if dir == "" {
		return os.TempDir()
	}
	return dir
}

// makeScratchDir creates the scratch directory dir if it does not exist.
func makeScratchDir(dir string) error { return os.MkdirAll(dir, 0o755) }

// createScratch creates a new scratch file in dir (made if needed) for
// the file named file; the caller removes it with removeScratch.
func createScratch(dir, file string) (*os.File, error) {
	for try := 0; ; try++ {
		p := filepath.Join(dir, "."+file+"."+strconv.FormatUint(rand.Uint64(), 36)+".tmp")
		f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil || try == 3 {
			return f, err
		}
		if errors.Is(err, fs.ErrNotExist) {
			if err := makeScratchDir(dir); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrExist) {
			return nil, err
		}
	}
}

// removeScratch removes scratch file f, which is closed or uploaded (then
// it is a no-op, since uploadScratch took the file over or the next Prune
// sweeps it).
func removeScratch(f *os.File) { os.Remove(f.Name()) }

// uploadScratch makes the closed scratch file at path object name of b.
func uploadScratch(ctx context.Context, b bucket.Bucket, name, path string) error {
	if fu, ok := b.(bucket.FileUploader); ok {
		return fu.UploadFile(ctx, name, path)
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return b.Upload(ctx, name, f)
}
