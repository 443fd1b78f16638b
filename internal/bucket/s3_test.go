package bucket_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/bucket/buckettest"
	"github.com/wirehouse/wirehouse/internal/bucket/s3test"
)

// TestS3Conformance: the S3 bucket keeps the interface's promises on a
// real S3-compatible store (SeaweedFS), each case in a new bucket, at the
// root and under a prefix, with a part size small enough that large
// uploads are multipart.
func TestS3Conformance(t *testing.T) {
	srv := s3test.Start(t)
	newBucket := func(prefix string) func() bucket.Bucket {
		return func() bucket.Bucket { return srv.Bucket(srv.CreateBucket("conformance"), prefix) }
	}
	t.Run("root", func(t *testing.T) { buckettest.Run(t, newBucket("")) })
	t.Run("prefix", func(t *testing.T) { buckettest.Run(t, newBucket("lake/one")) })
	t.Run("conditional", func(t *testing.T) { testConditional(t, srv.Bucket(srv.CreateBucket("conditional"), "p")) })
}

// testConditional: creating succeeds once, replacing needs the version
// read, and of writers racing on one version exactly one wins.
func testConditional(t *testing.T, b bucket.Conditional) {
	ctx := context.Background()
	if _, _, err := b.GetVersion(ctx, "lease"); !errors.Is(err, bucket.ErrNotFound) {
		t.Fatalf("GetVersion of a missing object: %v, want ErrNotFound", err)
	}
	v1, err := b.UploadIf(ctx, "lease", []byte("a"), "")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if _, err := b.UploadIf(ctx, "lease", []byte("b"), ""); !errors.Is(err, bucket.ErrPrecondition) {
		t.Fatalf("create of an existing object: %v, want ErrPrecondition", err)
	}
	data, v, err := b.GetVersion(ctx, "lease")
	if err != nil || string(data) != "a" || v != v1 {
		t.Fatalf("GetVersion = %q, %q, %v; want a, %q", data, v, err, v1)
	}
	v2, err := b.UploadIf(ctx, "lease", []byte("c"), v1)
	if err != nil {
		t.Fatalf("replace with the version read: %v", err)
	}
	if _, err := b.UploadIf(ctx, "lease", []byte("d"), v1); !errors.Is(err, bucket.ErrPrecondition) {
		t.Fatalf("replace with a stale version: %v, want ErrPrecondition", err)
	}
	// Racing writers, each with the current version: one wins.
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := b.UploadIf(ctx, "lease", []byte{byte('e' + i)}, v2)
			switch {
			case err == nil:
				mu.Lock()
				wins++
				mu.Unlock()
			case !errors.Is(err, bucket.ErrPrecondition):
				t.Errorf("racing writer: %v", err)
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d of 8 racing conditional writers won, want 1", wins)
	}
}
