// Package otlpfile reads OTLP export requests from files: the protobuf
// files wirehouse gen writes, the files of the OpenTelemetry Collector's
// file exporter, and OTLP/JSON, each optionally compressed. wirehouse
// ingest loads what it reads into the lake.
//
// # Files
//
// Collect expands the command line: a named file is taken whatever its
// name, provided its extension says its format; a directory is walked
// recursively and its files with a known extension are taken in lexical
// order. The extensions are
//
//	.binpb, .pb   OTLP protobuf
//	.json         OTLP/JSON
//
// each optionally followed by .gz (gzip) or .zst (zstd), e.g.
// logs-000001.binpb.zst.
//
// # Protobuf content
//
// A protobuf file, once decompressed, holds either one raw
// Export{Logs,Trace}ServiceRequest, as wirehouse gen and most tools write,
// or the Collector file exporter's proto format: a sequence of requests,
// each prefixed by its length as a 4-byte big-endian integer. The first
// byte tells them apart. A protobuf message starts with a tag, and a tag
// whose first byte is below 0x08 has field number 0, which is invalid, so
// a raw request never starts with 0x00-0x07; a length prefix does whenever
// the first request is shorter than 128 MiB (0x08000000 bytes). Content
// whose first byte is below 0x08 is therefore split as length-delimited,
// any other content is one raw request, and empty content holds no request.
// In a length-delimited stream, a message that starts with the zstd frame
// magic (28 b5 2f fd) is decompressed: the file exporter with
// compression: zstd compresses each message on its own, for the proto and
// the JSON format alike (a JSON file whose first byte is below 0x08 is
// such a stream of JSON documents). The requests themselves are not
// decoded here; the lake's Writer validates them.
//
// # JSON content
//
// A JSON file holds one or more OTLP/JSON export requests: JSON lines, as
// the Collector's file exporter writes them, or a single (pretty-printed)
// document; any whitespace may separate documents. They are streamed with
// an encoding/json Decoder, one document at a time, and transcoded to
// protobuf with pdata, which implements the OTLP/JSON rules (hex ids,
// int64 as strings, enum names). A document that holds only another
// signal's top-level field (resourceSpans in a logs file) is an error
// wrapping ErrWrongSignal rather than an empty request.
//
// # Reading
//
// A Reader reads one file at a time with ReadFile and returns its requests
// as a File: protobuf slices with the offset of each in the decompressed
// content. The slices alias buffers the Reader reuses for the next file:
// nothing is copied per request, and the decompression buffer is sized
// once from a hint (the file size, the gzip ISIZE trailer or the zstd frame
// content size, capped) rather than grown from zero for each file.
// Decompressed content larger than the Reader's maximum file size is
// refused with ErrTooLarge before it is all in memory.
//
// # Signals
//
// Config.Signal names the signal of every file; without it each file's
// signal is told from its content (File.Signal): a JSON document's
// top-level field, or, for protobuf, DetectSignal: the three requests
// share their outer layout but not their records' fields, so a real
// request is valid, with records, as one signal only. Sniff tells a
// file's format whatever its name (the gzip or zstd magic number, then
// '{' for JSON). wirehouse ingest skips a metrics file, saying so, and
// wirehouse inspect prints each file's signal.
//
// # Errors
//
// A file that cannot be read is reported as an *Error with its path and
// the byte offset in the decompressed content where reading failed: the
// bad length prefix, the JSON document, or how far decompression got
// before the stream broke. Lengths read from the input are checked against
// the bytes that remain before anything is sliced or allocated.
package otlpfile
