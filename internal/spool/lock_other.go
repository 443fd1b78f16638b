//go:build !unix

package spool

import "os"

// lockDir does nothing where flock is not available: do not open one
// directory twice.
func lockDir(dir string) (*os.File, error) { return nil, nil }

func unlockDir(*os.File) error { return nil }
