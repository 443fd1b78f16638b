// Package s3test runs a real S3-compatible store for tests: SeaweedFS's
// `weed server -s3`, the binary WIREHOUSE_WEED names (`make test` builds
// it from tools/seaweedfs and sets it), on loopback ports chosen by the
// OS, with its data in a test directory. Tests skip when it is not set.
package s3test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/wirehouse/wirehouse/internal/bucket"
)

// The credentials tests use; the gateway runs without identities and
// accepts any.
const (
	AccessKey = "wirehouse"
	SecretKey = "wirehouse-secret"
	Region    = "us-east-1"
)

// Server is a running SeaweedFS.
type Server struct {
	Endpoint string // the S3 gateway's URL
	t        *testing.T
	args     []string
	log      *os.File
	cmd      *exec.Cmd
	done     chan struct{}
}

// Start runs SeaweedFS until the test ends and waits until its S3 gateway
// answers. It skips the test when WIREHOUSE_WEED is not set.
func Start(t *testing.T) *Server {
	t.Helper()
	weed := os.Getenv("WIREHOUSE_WEED")
	if weed == "" {
		t.Skip("WIREHOUSE_WEED not set; `make test` builds SeaweedFS and sets it")
	}
	s := &Server{t: t}
	dir := t.TempDir()
	var err error
	if s.log, err = os.CreateTemp(t.TempDir(), "weed-*.log"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Stop()
		if t.Failed() {
			b, _ := os.ReadFile(s.log.Name())
			if len(b) > 20000 {
				b = b[len(b)-20000:]
			}
			t.Logf("weed output (tail):\n%s", b)
		}
	})
	// The ports are free when chosen but not reserved: another process
	// (a test package running beside this one) can take one before weed
	// binds it, and weed then exits. Such a start is tried again on new
	// ports.
	for attempt := 1; ; attempt++ {
		ports := freePorts(t, 8)
		p := func(i int) string { return strconv.Itoa(ports[i]) }
		s.Endpoint = "http://127.0.0.1:" + p(0)
		s.args = []string{weed, "server", "-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
			"-master.port=" + p(1), "-master.port.grpc=" + p(2), "-volume.port=" + p(3), "-volume.port.grpc=" + p(4),
			"-filer.port=" + p(5), "-filer.port.grpc=" + p(6), "-s3", "-s3.port=" + p(0), "-s3.port.grpc=" + p(7),
			// A fixed volume count, not 0 (free disk space divided by the
			// volume size): every bucket a test makes grows its own volumes
			// (sparse files, 64 MiB at most), and on a disk with ~12 GiB free
			// the derived limit ran out part-way through the conformance
			// tests (PutObject answered 500: "no free volumes left").
			"-volume.max=1000", "-master.volumeSizeLimitMB=64",
			// Not 1 % of the disk (the default): on a large disk nearly
			// full, weed marked every volume read-only and would grow
			// none ("Not enough data nodes found"), and every S3 test
			// failed with writes that never completed.
			"-volume.minFreeSpace=256MiB"}
		err := s.start()
		if err == nil {
			return s
		}
		if attempt == 3 || !errors.Is(err, errExited) {
			t.Fatalf("SeaweedFS's S3 gateway did not answer on %s: %v", s.Endpoint, err)
		}
		t.Logf("SeaweedFS exited while starting (attempt %d; a port taken?), trying new ports", attempt)
		os.RemoveAll(dir)
		os.MkdirAll(dir, 0o755)
	}
}

var errExited = errors.New("weed exited")

// Stop kills the server (SIGKILL), as a store that goes away does.
func (s *Server) Stop() {
	if s.cmd == nil {
		return
	}
	s.cmd.Process.Kill()
	<-s.done
	s.cmd = nil
}

// Restart starts the stopped server again on the same ports and data, and
// waits until it answers.
func (s *Server) Restart() {
	s.t.Helper()
	if err := s.start(); err != nil {
		s.t.Fatalf("SeaweedFS's S3 gateway did not answer on %s: %v", s.Endpoint, err)
	}
}

// start runs weed unless it runs and waits until the S3 gateway answers;
// errExited when weed exits first.
func (s *Server) start() error {
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.args[0], s.args[1:]...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start weed: %w", err)
	}
	s.cmd, s.done = cmd, make(chan struct{})
	go func() { cmd.Wait(); close(s.done) }()
	client := s.Client()
	for deadline := time.Now().Add(90 * time.Second); ; {
		_, err := client.ListBuckets(context.Background(), &s3.ListBucketsInput{})
		if err == nil {
			return nil
		}
		select {
		case <-s.done:
			s.cmd = nil
			return fmt.Errorf("%w: %v", errExited, cmd.ProcessState)
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return err
		}
	}
}

// Client is an S3 client of the server with the test credentials.
func (s *Server) Client() *s3.Client {
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(Region),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")))
	if err != nil {
		s.t.Fatal(err)
	}
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String(s.Endpoint), true
	})
}

var seq atomic.Int64

// CreateBucket creates a new bucket named after base and returns its name.
func (s *Server) CreateBucket(base string) string {
	s.t.Helper()
	name := fmt.Sprintf("%s-%d", base, seq.Add(1))
	if _, err := s.Client().CreateBucket(context.Background(), &s3.CreateBucketInput{Bucket: aws.String(name)}); err != nil {
		s.t.Fatalf("create bucket %s: %v", name, err)
	}
	return name
}

// Env sets the AWS environment variables a process (or the SDK in this
// one) needs to reach the server with the test credentials.
func (s *Server) Env(t *testing.T) {
	for _, kv := range s.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
}

// Environ returns the AWS SDK's environment variables (KEY=value) for the
// server's credentials and region, for a child process of a test that
// runs in parallel (where Env, which sets them in the test's own
// environment, may not).
func (s *Server) Environ() []string {
	return []string{"AWS_ACCESS_KEY_ID=" + AccessKey, "AWS_SECRET_ACCESS_KEY=" + SecretKey, "AWS_REGION=" + Region}
}

// Bucket returns bucket name of the server as a bucket.S3 under prefix.
func (s *Server) Bucket(name, prefix string) *bucket.S3 {
	s.t.Helper()
	b, err := bucket.NewS3(context.Background(), bucket.S3Config{Bucket: name, Prefix: prefix, Endpoint: s.Endpoint,
		Region: Region, PathStyle: true, PartSize: 5 << 20,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""))})
	if err != nil {
		s.t.Fatal(err)
	}
	return b
}

// freePorts returns n distinct loopback ports free at the time of the
// call: every listener stays open until all are chosen, so the OS cannot
// hand one port out twice (it did when each was closed in turn: weed's
// master and its S3 gateway were given one port and weed exited).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	return ports
}
