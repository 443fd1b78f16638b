package lake

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

// zstdCodec is the compression of every column. The fastest level: the
// lake is written on the ingest path; a later compaction can recompress.
// With literals entropy-coded even in a block without matches
// (WithAllLitEntropyCompression): klauspost's fast levels store such a
// block raw, and a page of random ids (a UUID, a request id) is such a
// block; Huffman codes its hex digits in about half the bytes
// (BenchmarkLogsToParquet 59.9 -> 51.0 bytes a log, BenchmarkSpansToParquet
// 109.7 -> 97.2 bytes a span, no slower).
var zstdCodec = &pageCodec{}

// pageWindow is the zstd window of a page: twice pageSize, so a data page
// finds every match it could, and a dictionary page (which is not cut at
// pageSize) loses only matches further back than this.
const pageWindow = 2 * pageSize

// pageCodec is parquet-go's zstd codec (compress/zstd) with encoders sized
// for Parquet pages. That one keeps klauspost's defaults, an 8 MiB window
// and a 16 MiB history per pooled encoder, which is most of a busy lake
// writer's memory for compression and buys nothing on 64 KiB pages; this
// one's encoders hold about pageWindow plus a block (128 KiB). The
// output is ordinary zstd, one frame per page, which every reader decodes.
type pageCodec struct {
	encoders sync.Pool // *zstd.Encoder
	decoders sync.Pool // *zstd.Decoder
}

func (c *pageCodec) String() string { return "ZSTD" }

func (c *pageCodec) CompressionCodec() format.CompressionCodec { return format.Zstd }

// Encode appends the compressed src to dst[:0] and returns it.
func (c *pageCodec) Encode(dst, src []byte) ([]byte, error) {
	e, _ := c.encoders.Get().(*zstd.Encoder)
	if e == nil {
		var err error
		e, err = zstd.NewWriter(nil,
			zstd.WithEncoderLevel(zstd.SpeedFastest),
			zstd.WithEncoderConcurrency(1),
			zstd.WithWindowSize(pageWindow),
			zstd.WithLowerEncoderMem(true),
			zstd.WithZeroFrames(true),
			zstd.WithEncoderCRC(false),
			zstd.WithAllLitEntropyCompression(true))
		if err != nil {
			return dst[:0], fmt.Errorf("create zstd encoder: %w", err)
		}
	}
	out := e.EncodeAll(src, dst[:0])
	c.encoders.Put(e)
	return out, nil
}

// Decode appends the decompressed src to dst[:0] and returns it.
func (c *pageCodec) Decode(dst, src []byte) ([]byte, error) {
	d, _ := c.decoders.Get().(*zstd.Decoder)
	if d == nil {
		var err error
		d, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
		if err != nil {
			return dst[:0], fmt.Errorf("create zstd decoder: %w", err)
		}
	}
	out, err := d.DecodeAll(src, dst[:0])
	c.decoders.Put(d)
	if err != nil {
		return out, fmt.Errorf("decode zstd page: %w", err)
	}
	return out, nil
}
