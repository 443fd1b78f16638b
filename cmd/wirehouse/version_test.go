package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/wirehouse/wirehouse/internal/buildinfo"
)

func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"version"}, {"--version"}, {"-version"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if err := run(context.Background(), args, &stdout, &stderr); err != nil {
				t.Fatal(err)
			}
			if got, want := stdout.String(), buildinfo.Get().String()+"\n"; got != want || stderr.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want %q", got, stderr.String(), want)
			}
		})
	}
	if err := run(context.Background(), []string{"version", "extra"}, new(bytes.Buffer), new(bytes.Buffer)); err == nil {
		t.Error("version with an argument succeeded")
	}
}
