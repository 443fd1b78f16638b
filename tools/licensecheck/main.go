// Command licensecheck is go-licenses' check (github.com/google/go-licenses
// v1.6.0, its licenses package) with one change: each license file is
// classified once. go-licenses' own check classifies a module's license
// file again for every package of the module (licenses.Find identifies
// each candidate on the way up from a package's directory), which was
// most of the time scripts/check-licenses.sh took: about 90 s with warm
// caches and ten minutes on a cold machine beside the peers' builds.
// The packages found, the libraries they form, the classifier and its
// confidence threshold, the allowed names and the messages are
// go-licenses' own, so the verdicts are the same.
//
// Usage (as go-licenses check):
//
//	licensecheck [--include_tests] --allowed_licenses=A,B [--ignore=PREFIX ...] PACKAGES...
//
// It prints "Not allowed license NAME found for library LIB" on stderr
// for each library whose license is not allowed and exits 1; 0 when all
// are allowed; 2 for a bad command line.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/google/go-licenses/licenses"
)

// confidenceThreshold is go-licenses' default --confidence_threshold.
const confidenceThreshold = 0.9

func main() {
	includeTests := flag.Bool("include_tests", false, "include packages only imported by testing code")
	allowed := flag.String("allowed_licenses", "", "comma-separated license names allowed (required)")
	var ignore []string
	flag.Func("ignore", "package path prefix to be ignored (repeatable); its dependencies are still checked", func(s string) error {
		ignore = append(ignore, s)
		return nil
	})
	flag.Parse()
	if *allowed == "" || flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: licensecheck [--include_tests] --allowed_licenses=A,B [--ignore=PREFIX ...] PACKAGES...")
		os.Exit(2)
	}
	names := map[string]bool{}
	for _, n := range strings.Split(*allowed, ",") {
		names[strings.TrimSpace(n)] = true
	}
	bad, err := check(context.Background(), names, *includeTests, ignore, flag.Args())
	if err != nil {
		fmt.Fprintln(os.Stderr, "licensecheck:", err)
		os.Exit(1)
	}
	if bad {
		os.Exit(1)
	}
}

// check reports whether a library of the packages has a license not in
// allowed, writing each to stderr as go-licenses check does.
func check(ctx context.Context, allowed map[string]bool, includeTests bool, ignore, pkgs []string) (bool, error) {
	c, err := licenses.NewClassifier(confidenceThreshold)
	if err != nil {
		return false, err
	}
	mc := &memoClassifier{c: c, m: map[string]identity{}}
	libs, err := licenses.Libraries(ctx, mc, includeTests, ignore, pkgs...)
	if err != nil {
		return false, err
	}
	bad := false
	for _, lib := range libs {
		name, _, err := mc.Identify(lib.LicensePath)
		if err != nil {
			return false, err
		}
		if !allowed[name] {
			fmt.Fprintf(os.Stderr, "Not allowed license %s found for library %v\n", name, lib)
			bad = true
		}
	}
	return bad, nil
}

// identity is what the classifier said of a file.
type identity struct {
	name string
	typ  licenses.Type
	err  error
}

// memoClassifier is a licenses.Classifier that classifies each file once.
type memoClassifier struct {
	c  licenses.Classifier
	mu sync.Mutex
	m  map[string]identity
}

// Identify is the classifier's Identify of path, the first time it is
// asked; later the same answer.
func (mc *memoClassifier) Identify(path string) (string, licenses.Type, error) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	id, ok := mc.m[path]
	if !ok {
		id.name, id.typ, id.err = mc.c.Identify(path)
		mc.m[path] = id
	}
	return id.name, id.typ, id.err
}
