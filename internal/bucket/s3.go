package bucket

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/http"
	"os"
	"strings"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// S3Config says where an S3 bucket is. Credentials, and the region and
// endpoint when not set here, come the standard AWS way (environment,
// shared config and credentials files, instance roles), so the same
// settings work with AWS S3, MinIO, SeaweedFS, Ceph RGW, R2 and GCS's S3
// API.
type S3Config struct {
	Bucket string // the bucket's name; it must exist
	Prefix string // a key prefix the lake lives under ("" for the root)
	// Endpoint is the store's URL (http://127.0.0.1:8333); empty: AWS's
	// (or AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL).
	Endpoint string
	// Region; empty: the AWS configuration's, else us-east-1.
	Region string
	// PathStyle addresses the bucket in the path (endpoint/bucket/key),
	// as most self-hosted stores want, rather than as a host name.
	PathStyle bool
	// PartSize is the size of an upload's parts; an object up to it is
	// one PutObject. Default 16 MiB; at least 5 MiB (S3's minimum).
	PartSize int64
	// Credentials, if set, replace those of the AWS configuration.
	Credentials aws.CredentialsProvider
}

// S3 is a Bucket in an S3-compatible object store. Objects are written
// whole (PutObject, or a multipart upload that becomes visible only when
// it completes), read with ranged GETs, listed by prefix.
type S3 struct {
	cfg    S3Config
	client *s3.Client
	gets   atomic.Int64 // GET requests made (for the read path's reports)
	read   atomic.Int64 // bytes they returned
}

// NewS3 returns the bucket of cfg.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("bucket: S3 bucket name empty")
	}
	if cfg.Prefix != "" {
		cfg.Prefix = strings.Trim(cfg.Prefix, "/")
		if err := ValidName(cfg.Prefix); err != nil {
			return nil, fmt.Errorf("bucket: S3 prefix: %w", err)
		}
	}
	if cfg.PartSize == 0 {
		cfg.PartSize = 16 << 20
	}
	if cfg.PartSize < 5<<20 {
		return nil, fmt.Errorf("bucket: S3 part size %d below S3's minimum of 5 MiB", cfg.PartSize)
	}
	var opts []func(*config.LoadOptions) error
	if cfg.Region != "" {
		opts = append(opts, config.WithRegion(cfg.Region))
	}
	if cfg.Credentials != nil {
		opts = append(opts, config.WithCredentialsProvider(cfg.Credentials))
	}
	awsCfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("bucket: AWS configuration: %w", err)
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	client := s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
		}
		o.UsePathStyle = cfg.PathStyle
		// No "Expect: 100-continue" on large PUTs: a store that does not
		// answer it (SeaweedFS) makes Go's client wait a second before
		// each body.
		o.ContinueHeaderThresholdBytes = -1
		// Checksums only where the operation requires them: several
		// S3-compatible stores refuse the newer default trailers.
		o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
		o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
	})
	return &S3{cfg: cfg, client: client}, nil
}

// GETs is the number of GET requests made so far.
func (b *S3) GETs() int64 { return b.gets.Load() }

// BytesRead is the number of bytes GET requests returned so far, through
// Open's objects and GetVersion (Get's readers are the caller's).
func (b *S3) BytesRead() int64 { return b.read.Load() }

func (b *S3) key(name string) string {
	if b.cfg.Prefix == "" {
		return name
	}
	return b.cfg.Prefix + "/" + name
}

// s3NotFound reports whether err is S3's "no such key" (or a 404).
func s3NotFound(err error) bool {
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &nsk) || errors.As(err, &nf) {
		return true
	}
	var re interface{ HTTPStatusCode() int }
	if errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound {
		return true
	}
	var ae smithy.APIError
	return errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound")
}

func (b *S3) Get(ctx context.Context, name string) (io.ReadCloser, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	b.gets.Add(1)
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.cfg.Bucket, Key: aws.String(b.key(name))})
	if err != nil {
		if s3NotFound(err) {
			return nil, fmt.Errorf("bucket: get %s: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("bucket: get %s: %w", name, err)
	}
	return out.Body, nil
}

func (b *S3) Open(ctx context.Context, name string) (Object, error) {
	if err := ValidName(name); err != nil {
		return nil, err
	}
	head, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &b.cfg.Bucket, Key: aws.String(b.key(name))})
	if err != nil {
		if s3NotFound(err) {
			return nil, fmt.Errorf("bucket: open %s: %w", name, ErrNotFound)
		}
		return nil, fmt.Errorf("bucket: open %s: %w", name, err)
	}
	return &s3Object{b: b, name: name, size: aws.ToInt64(head.ContentLength), etag: aws.ToString(head.ETag)}, nil
}

// s3Object reads an object with ranged GETs, each pinned to the ETag the
// object had when opened (If-Match), so that a replaced object is an
// error rather than a mix of two versions.
type s3Object struct {
	b    *S3
	name string
	size int64
	etag string
}

func (o *s3Object) Size() int64  { return o.size }
func (o *s3Object) Close() error { return nil }

func (o *s3Object) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("bucket: read %s at %d: negative offset", o.name, off)
	}
	if off >= o.size {
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	end := min(off+int64(len(p)), o.size) - 1
	in := &s3.GetObjectInput{Bucket: &o.b.cfg.Bucket, Key: aws.String(o.b.key(o.name)),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, end))}
	if o.etag != "" {
		in.IfMatch = aws.String(o.etag)
	}
	o.b.gets.Add(1)
	out, err := o.b.client.GetObject(context.Background(), in)
	if err != nil {
		return 0, fmt.Errorf("bucket: read %s at %d: %w", o.name, off, err)
	}
	defer out.Body.Close()
	n, err := io.ReadFull(out.Body, p[:end-off+1])
	o.b.read.Add(int64(n))
	if err != nil {
		return n, fmt.Errorf("bucket: read %s at %d: %w", o.name, off, err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (b *S3) List(ctx context.Context, prefix string) iter.Seq2[Attrs, error] {
	return func(yield func(Attrs, error) bool) {
		if prefix != "" {
			if err := ValidPrefix(prefix); err != nil {
				yield(Attrs{}, err)
				return
			}
		}
		p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.cfg.Bucket, Prefix: aws.String(b.key(prefix))})
		if b.cfg.Prefix != "" && prefix == "" {
			p = s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: &b.cfg.Bucket, Prefix: aws.String(b.cfg.Prefix + "/")})
		}
		for p.HasMorePages() {
			page, err := p.NextPage(ctx)
			if err != nil {
				yield(Attrs{}, fmt.Errorf("bucket: list %q: %w", prefix, err))
				return
			}
			for _, o := range page.Contents {
				name := aws.ToString(o.Key)
				if b.cfg.Prefix != "" {
					name = strings.TrimPrefix(name, b.cfg.Prefix+"/")
				}
				if !yield(Attrs{Name: name, Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)}, nil) {
					return
				}
			}
		}
	}
}

// Upload writes r as object name: one PutObject for up to PartSize bytes,
// else a multipart upload, which the store makes visible only when it
// completes (and aborts on failure).
func (b *S3) Upload(ctx context.Context, name string, r io.Reader) error {
	if err := ValidName(name); err != nil {
		return err
	}
	key := aws.String(b.key(name))
	first := make([]byte, b.cfg.PartSize)
	n, err := io.ReadFull(r, first)
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		_, err = b.client.PutObject(ctx, &s3.PutObjectInput{Bucket: &b.cfg.Bucket, Key: key,
			Body: bytes.NewReader(first[:n]), ContentLength: aws.Int64(int64(n))})
		if err != nil {
			return fmt.Errorf("bucket: upload %s: %w", name, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("bucket: upload %s: read: %w", name, err)
	}
	mp, err := b.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &b.cfg.Bucket, Key: key})
	if err != nil {
		return fmt.Errorf("bucket: upload %s: %w", name, err)
	}
	abort := func(cause error) error {
		// A fresh context: the upload's may be what ended.
		b.client.AbortMultipartUpload(context.Background(), &s3.AbortMultipartUploadInput{ //nolint:errcheck // best effort; stores expire them too
			Bucket: &b.cfg.Bucket, Key: key, UploadId: mp.UploadId})
		return fmt.Errorf("bucket: upload %s: %w", name, cause)
	}
	var parts []types.CompletedPart
	buf := first
	for num := int32(1); ; num++ {
		out, err := b.client.UploadPart(ctx, &s3.UploadPartInput{Bucket: &b.cfg.Bucket, Key: key, UploadId: mp.UploadId,
			PartNumber: aws.Int32(num), Body: bytes.NewReader(buf[:n]), ContentLength: aws.Int64(int64(n))})
		if err != nil {
			return abort(err)
		}
		parts = append(parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(num)})
		n, err = io.ReadFull(r, buf)
		if err == io.EOF {
			break
		}
		if err != nil && err != io.ErrUnexpectedEOF {
			return abort(err)
		}
	}
	_, err = b.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &b.cfg.Bucket, Key: key,
		UploadId: mp.UploadId, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err != nil {
		return abort(err)
	}
	return nil
}

// UploadFile uploads the local file at path as object name and removes
// the file.
func (b *S3) UploadFile(ctx context.Context, name, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("bucket: upload %s: %w", name, err)
	}
	err = b.Upload(ctx, name, f)
	f.Close()
	if err != nil {
		return err
	}
	return os.Remove(path)
}

func (b *S3) Delete(ctx context.Context, name string) error {
	if err := ValidName(name); err != nil {
		return err
	}
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.cfg.Bucket, Key: aws.String(b.key(name))})
	if err != nil && !s3NotFound(err) {
		return fmt.Errorf("bucket: delete %s: %w", name, err)
	}
	return nil
}

// GetVersion returns object name's content and ETag.
func (b *S3) GetVersion(ctx context.Context, name string) ([]byte, string, error) {
	if err := ValidName(name); err != nil {
		return nil, "", err
	}
	b.gets.Add(1)
	out, err := b.client.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.cfg.Bucket, Key: aws.String(b.key(name))})
	if err != nil {
		if s3NotFound(err) {
			return nil, "", fmt.Errorf("bucket: get %s: %w", name, ErrNotFound)
		}
		return nil, "", fmt.Errorf("bucket: get %s: %w", name, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	b.read.Add(int64(len(data)))
	if err != nil {
		return nil, "", fmt.Errorf("bucket: get %s: %w", name, err)
	}
	return data, aws.ToString(out.ETag), nil
}

// UploadIf puts data as object name with If-Match: version, or
// If-None-Match: * when version is "". S3 answers 412 (or 409 to a
// concurrent conditional write) when the condition fails.
func (b *S3) UploadIf(ctx context.Context, name string, data []byte, version string) (string, error) {
	if err := ValidName(name); err != nil {
		return "", err
	}
	in := &s3.PutObjectInput{Bucket: &b.cfg.Bucket, Key: aws.String(b.key(name)),
		Body: bytes.NewReader(data), ContentLength: aws.Int64(int64(len(data)))}
	if version == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(version)
	}
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		var re interface{ HTTPStatusCode() int }
		if errors.As(err, &re) && (re.HTTPStatusCode() == http.StatusPreconditionFailed || re.HTTPStatusCode() == http.StatusConflict) ||
			version != "" && s3NotFound(err) {
			return "", fmt.Errorf("bucket: upload %s: %w", name, ErrPrecondition)
		}
		return "", fmt.Errorf("bucket: upload %s: %w", name, err)
	}
	return aws.ToString(out.ETag), nil
}
