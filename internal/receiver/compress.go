package receiver

import (
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"google.golang.org/grpc/encoding"
)

// The gRPC compressors "gzip" and "zstd", registered for every gRPC server
// and client in the process, built on klauspost/compress. gRPC bounds what
// a decompressor may yield by the maximum message size; the zstd decoder
// also bounds the window a frame may ask for.
func init() {
	encoding.RegisterCompressor(&gzipCompressor{})
	encoding.RegisterCompressor(&zstdCompressor{})
}

type gzipCompressor struct {
	writers sync.Pool // *gzip.Writer
}

func (*gzipCompressor) Name() string { return "gzip" }

func (c *gzipCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	zw, _ := c.writers.Get().(*gzip.Writer)
	if zw == nil {
		var err error
		if zw, err = gzip.NewWriterLevel(w, gzip.DefaultCompression); err != nil {
			return nil, err
		}
	} else {
		zw.Reset(w)
	}
	return &pooledWriter{WriteCloser: zw, put: func() { c.writers.Put(zw) }}, nil
}

func (*gzipCompressor) Decompress(r io.Reader) (io.Reader, error) {
	zr, _ := gzipPool.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(r)
	} else {
		err = zr.Reset(r)
	}
	if err != nil {
		return nil, err
	}
	return &pooledReader{Reader: zr, put: func() { gzipPool.Put(zr) }}, nil
}

type zstdCompressor struct {
	writers sync.Pool // *zstd.Encoder
}

func (*zstdCompressor) Name() string { return "zstd" }

func (c *zstdCompressor) Compress(w io.Writer) (io.WriteCloser, error) {
	zw, _ := c.writers.Get().(*zstd.Encoder)
	if zw == nil {
		var err error
		zw, err = zstd.NewWriter(w, zstd.WithEncoderConcurrency(1), zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			return nil, err
		}
	} else {
		zw.Reset(w)
	}
	return &pooledWriter{WriteCloser: zw, put: func() { c.writers.Put(zw) }}, nil
}

func (*zstdCompressor) Decompress(r io.Reader) (io.Reader, error) {
	zr := zstdPool.Get().(*zstd.Decoder)
	if err := zr.Reset(r); err != nil {
		zstdPool.Put(zr)
		return nil, err
	}
	return &pooledReader{Reader: zr, put: func() {
		zr.Reset(nil) //nolint:errcheck // drops the reference to r
		zstdPool.Put(zr)
	}}, nil
}

// pooledWriter returns its compressor to the pool on Close.
type pooledWriter struct {
	io.WriteCloser
	put func()
}

func (w *pooledWriter) Close() error {
	err := w.WriteCloser.Close()
	if w.put != nil {
		w.put()
		w.put = nil
	}
	return err
}

// pooledReader returns its decompressor to the pool at EOF or error; gRPC
// reads until one of them.
type pooledReader struct {
	io.Reader
	put func()
}

func (r *pooledReader) Read(p []byte) (int, error) {
	if r.put == nil {
		return 0, io.EOF
	}
	n, err := r.Reader.Read(p)
	if err != nil {
		r.put()
		r.put = nil
	}
	return n, err
}
