package main

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// readmeS3Block returns the commands of README.md's first sh block under
// "## More than one node", continuation lines joined.
func readmeS3Block(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## More than one node\n")
	if !ok {
		t.Fatal(`README.md has no "## More than one node" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	_, block, ok := strings.Cut(section, "\n```sh\n")
	if !ok {
		t.Fatal("README.md's More than one node section has no sh block")
	}
	block, _, _ = strings.Cut(block, "\n```\n")
	var cmds []string
	cont := ""
	sc := bufio.NewScanner(strings.NewReader(block))
	for sc.Scan() {
		line := cont + sc.Text()
		if l, ok := strings.CutSuffix(line, "\\"); ok {
			cont = l
			continue
		}
		cont = ""
		if strings.TrimSpace(line) != "" {
			cmds = append(cmds, line)
		}
	}
	return cmds
}

// TestServeS3Readme runs README.md's commands for two nodes on one
// SeaweedFS: its credentials, its weed server line (on free ports: only
// the ports and the directory change) and the bucket creation as written,
// then the serve lines with their $lake flags (on free ports, the binary
// this test's), and checks that both nodes' lake files land in the bucket
// the README created, under the prefix its --lake-url names. The weed
// binary the README names must be the Makefile's.
func TestServeS3Readme(t *testing.T) {
	weed := peerFromEnv(t, "WIREHOUSE_WEED", "builds SeaweedFS")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl in PATH")
	}
	cmds := readmeS3Block(t)
	mk, err := os.ReadFile(filepath.Join("..", "..", "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^WEED := \$\(CURDIR\)/(bin/weed-\S+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile sets no WEED")
	}
	readmeWeed := string(m[1])

	// The script: every line but the serve lines, with weed on free
	// ports, then what the test needs of its variables.
	dir := t.TempDir()
	port := strconv.Itoa(freeLoopbackPort(t))
	var script, serves []string
	sawWeed := false
	for _, c := range cmds {
		switch {
		case strings.HasPrefix(c, "go run ./cmd/wirehouse serve "):
			serves = append(serves, strings.TrimPrefix(c, "go run ./cmd/wirehouse serve "))
			continue
		case strings.HasPrefix(c, readmeWeed+" server "):
			sawWeed = true
			c = strings.Replace(c, readmeWeed+" server ", weed+" server "+weedPorts(t)+" ", 1)
			if c = strings.Replace(c, "-dir=/tmp/weed", "-dir="+dir, 1); !strings.Contains(c, dir) {
				t.Fatalf("README's weed line has no -dir=/tmp/weed: %s", c)
			}
		case strings.Contains(c, "bin/weed"):
			t.Fatalf("README's line %q names a weed other than the Makefile's %s", c, readmeWeed)
		}
		script = append(script, strings.ReplaceAll(c, "8333", port))
	}
	if len(serves) != 2 || !sawWeed {
		t.Fatalf("README's block: want a weed server line and two serve lines:\n%s", strings.Join(cmds, "\n"))
	}
	script = append([]string{"set -e"}, script...)
	script = append(script, `echo "lake=$lake"`, `echo "env=AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY AWS_REGION=$AWS_REGION"`)

	out, err := os.Create(filepath.Join(t.TempDir(), "script.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	sh := exec.CommandContext(ctx, "bash", "-c", strings.Join(script, "\n"))
	sh.Dir = filepath.Join("..", "..")
	// As in the shell of a user with AWS credentials of their own (or
	// one that ran the block before): weed makes whatever keys its
	// environment holds its admin identity.
	sh.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=a-users-own-key", "AWS_SECRET_ACCESS_KEY=a-users-own-secret")
	// weed runs in the background in the script's process group, which
	// is killed at the end; a file for the output, as weed keeps it open.
	sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	sh.Cancel = func() error { return syscall.Kill(-sh.Process.Pid, syscall.SIGKILL) }
	sh.Stdout, sh.Stderr = out, out
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Before the data directory goes: weed gone (its group empty).
		syscall.Kill(-sh.Process.Pid, syscall.SIGKILL)
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if syscall.Kill(-sh.Process.Pid, 0) == syscall.ESRCH {
				return
			}
		}
	})
	err = sh.Wait()
	output, _ := os.ReadFile(out.Name())
	if err != nil {
		t.Fatalf("README's commands: %v\n%s\n%s", err, strings.Join(script, "\n"), lastBytes(output, 20000))
	}
	vars := map[string]string{}
	for _, l := range strings.Split(string(output), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok && (k == "lake" || k == "env") {
			vars[k] = v
		}
	}
	for _, kv := range strings.Fields(vars["env"]) {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	lake := strings.Fields(vars["lake"])
	bkt, prefix := "", ""
	for i, a := range lake {
		if a == "--lake-url" && i+1 < len(lake) {
			bkt, prefix, _ = strings.Cut(strings.TrimPrefix(lake[i+1], "s3://"), "/")
		}
	}
	if bkt == "" || prefix == "" || os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		t.Fatalf("README's commands set lake=%q, %q: want an s3:// --lake-url and AWS credentials", vars["lake"], vars["env"])
	}

	// The serve lines, their listen and data flags the test's own.
	var nodes []*serveProc
	for _, line := range serves {
		var args []string
		fields := strings.Fields(strings.TrimSuffix(strings.TrimSpace(line), "&"))
		for i := 0; i < len(fields); i++ {
			switch f := fields[i]; f {
			case "$lake":
				args = append(args, lake...)
			case "--data-dir", "--grpc-listen", "--http-listen", "--admin-listen", "--jaeger-storage-listen":
				i++
			default:
				args = append(args, f)
			}
		}
		p := startServeProc(t, t.TempDir(), append(args, "--lake-max-delay", "300ms")...)
		t.Cleanup(func() {
			if p.cmd.ProcessState == nil {
				p.cmd.Process.Kill()
				p.cmd.Wait()
			}
		})
		nodes = append(nodes, p)
	}
	for i, p := range nodes {
		if code, _ := postLogs(t, p, idRange(int64(100*i), 20)); code != http.StatusOK {
			t.Fatalf("logs to node %d: HTTP %d\n%s", i, code, p.stderr)
		}
	}
	for _, p := range nodes {
		pollUntil(t, time.Minute, "the lake caught up", func() bool { return lakeCaughtUp(p) })
		p.stop(t)
	}

	// The bucket holds both nodes' log files under the prefix.
	cfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion(os.Getenv("AWS_REGION")),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), "")))
	if err != nil {
		t.Fatal(err)
	}
	client := s3.NewFromConfig(cfg, func(o *s3.Options) {
		o.BaseEndpoint, o.UsePathStyle = aws.String("http://127.0.0.1:"+port), true
	})
	var files []string
	pages := s3.NewListObjectsV2Paginator(client, &s3.ListObjectsV2Input{Bucket: aws.String(bkt), Prefix: aws.String(prefix + "/logs/")})
	for pages.HasMorePages() {
		page, err := pages.NextPage(context.Background())
		if err != nil {
			t.Fatalf("list s3://%s/%s/logs/: %v", bkt, prefix, err)
		}
		for _, o := range page.Contents {
			if strings.HasSuffix(aws.ToString(o.Key), ".parquet") {
				files = append(files, aws.ToString(o.Key))
			}
		}
	}
	for _, node := range []string{"node-a", "node-b"} {
		found := false
		for _, f := range files {
			found = found || strings.Contains(f, node)
		}
		if !found {
			t.Errorf("no Parquet file of %s in s3://%s/%s/logs/: %v", node, bkt, prefix, files)
		}
	}
}

// weedPorts are weed server flags that put every port but the S3
// gateway's on a free loopback port.
func weedPorts(t *testing.T) string {
	t.Helper()
	p := func() string { return strconv.Itoa(freeLoopbackPort(t)) }
	return "-ip=127.0.0.1 -ip.bind=127.0.0.1 -master.port=" + p() + " -master.port.grpc=" + p() +
		" -volume.port=" + p() + " -volume.port.grpc=" + p() + " -filer.port=" + p() + " -filer.port.grpc=" + p() +
		" -s3.port.grpc=" + p() + " -volume.max=100 -master.volumeSizeLimitMB=64"
}

// freeLoopbackPort is a loopback TCP port free a moment ago.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// lastBytes is the last n bytes of b.
func lastBytes(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
