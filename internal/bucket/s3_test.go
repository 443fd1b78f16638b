package bucket_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/internal/bucket/buckettest"
)

// freePort is a loopback port no one listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startSeaweedFS runs SeaweedFS (`weed server` with its S3 gateway, the
// binary WIREHOUSE_WEED names) on loopback ports, with its data in a test
// directory, and returns the S3 endpoint.
func startSeaweedFS(t *testing.T) string {
	t.Helper()
	weed := os.Getenv("WIREHOUSE_WEED")
	if weed == "" {
		t.Skip("WIREHOUSE_WEED not set; `make test` builds SeaweedFS and sets it")
	}
	p := func() string { return strconv.Itoa(freePort(t)) }
	s3Port := p()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, weed, "server", "-dir="+t.TempDir(), "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		"-master.port="+p(), "-master.port.grpc="+p(), "-volume.port="+p(), "-volume.port.grpc="+p(),
		"-filer.port="+p(), "-filer.port.grpc="+p(), "-s3", "-s3.port="+s3Port, "-s3.port.grpc="+p(),
		"-volume.max=0", "-master.volumeSizeLimitMB=64")
	out, err := os.CreateTemp(t.TempDir(), "weed-*.log")
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(out.Name())
			t.Logf("weed output:\n%s", b)
		}
	})
	endpoint := "http://127.0.0.1:" + s3Port
	client := adminClient(t, endpoint)
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		_, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{})
		if err == nil {
			return endpoint
		}
		if time.Now().After(deadline) {
			t.Fatalf("SeaweedFS's S3 gateway did not answer on %s: %v", endpoint, err)
		}
	}
}

// adminClient is an S3 client of endpoint with test credentials (the
// gateway runs without identities).
func adminClient(t *testing.T, endpoint string) *s3.Client {
	t.Helper()
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("wirehouse", "wirehouse-secret", "")))
	if err != nil {
		t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(endpoint), true
	})
}

var bucketSeq atomic.Int64

// TestS3Conformance: the S3 bucket keeps the interface's promises on a
// real S3-compatible store (SeaweedFS), each case in a new bucket, at the
// root and under a prefix, with a part size small enough that large
// uploads are multipart.
func TestS3Conformance(t *testing.T) {
	endpoint := startSeaweedFS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "wirehouse")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "wirehouse-secret")
	client := adminClient(t, endpoint)
	newBucket := func(prefix string) func() bucket.Bucket {
		return func() bucket.Bucket {
			name := fmt.Sprintf("conformance-%d", bucketSeq.Add(1))
			if _, err := client.CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
				t.Fatalf("create bucket %s: %v", name, err)
			}
			b, err := bucket.NewS3(context.Background(), bucket.S3Config{Bucket: name, Prefix: prefix, Endpoint: endpoint,
				Region: "us-east-1", PathStyle: true, PartSize: 5 << 20})
			if err != nil {
				t.Fatal(err)
			}
			return b
		}
	}
	t.Run("root", func(t *testing.T) { buckettest.Run(t, newBucket("")) })
	t.Run("prefix", func(t *testing.T) { buckettest.Run(t, newBucket("lake/one")) })
}
