// Package durable makes file system changes survive a power loss: an
// fsync of the directory after a file is created, renamed or removed in
// it, and a whole-file replace that readers see either before or after,
// never half written.
package durable

import (
	"fmt"
	"os"
	"path/filepath"
)

// SyncDir fsyncs directory dir, making the creations, renames and removals
// of files in it durable.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteFile replaces the file at path with data: it writes path+".tmp",
// fsyncs it, renames it over path and fsyncs the directory. A reader sees
// the old content or the new, and after WriteFile returns the new content
// survives a power loss. On error the temporary file is removed and path
// is as it was.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err == nil {
		err = SyncDir(filepath.Dir(path))
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
