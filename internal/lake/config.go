package lake

import (
	"errors"
	"fmt"
	"time"

	"github.com/wirehouse/wirehouse/internal/bucket"
	"github.com/wirehouse/wirehouse/otlpwire"
)

// WriterConfig configures a Writer. Start from DefaultWriterConfig and set
// Dir (or Bucket); Validate reports what NewWriter would refuse.
type WriterConfig struct {
	// Dir is the directory the lake is written under, created if needed:
	// the Writer puts its files in bucket.NewLocal(Dir) and encodes each
	// one in Dir too, so a finished file is moved into place with one
	// rename. It must be set, unless Bucket is.
	Dir string
	// Bucket, if not nil, is where the Writer puts its files instead of
	// Dir, which must then be empty; each file is encoded in ScratchDir
	// before it is uploaded. The default, nil, is the lake in Dir.
	Bucket bucket.Bucket
	// ScratchDir is the local directory, created if needed, where a Writer
	// with a Bucket encodes each file before it is uploaded; "" (the
	// default) is os.TempDir(). It must be empty without a Bucket: a lake
	// in Dir encodes in Dir.
	ScratchDir string

	// FileSize is the size a Parquet file is aimed at: a batch is written
	// once its rows would make a file of about FileSize bytes, estimated
	// from the compression of the files written before. Default 64 MiB.
	// MaxBuffer caps the memory this takes, so with the defaults a file
	// of well-compressed logs is smaller. It must be at least 1 KiB.
	FileSize int64
	// MaxBuffer bounds the memory of one batch: it is written once the
	// requests appended to it reach MaxBuffer protobuf bytes, whatever
	// the file size estimate says. A process holds about 2.5 to 3 times
	// MaxBuffer per full batch (arenas, columns, Parquet buffers and the
	// garbage collector's headroom; measured with wirehouse ingest).
	// Default 256 MiB. It must be at least 1 KiB.
	MaxBuffer int64
	// MaxAge is how long rows wait in memory: a batch whose first row is
	// older than MaxAge is written at the next Append or FlushOld.
	// Default 5 minutes. It must be positive.
	MaxAge time.Duration
	// RowGroupRows is the most rows in one row group. Default 131,072. It
	// must be positive.
	RowGroupRows int
	// MaxAttributeColumns is, in schema version 1, the most attribute
	// columns one file has (default DefaultMaxAttributeColumns); version 2
	// keeps every attribute in a map and has a fixed set of columns. Past it, the attributes with
	// the fewest values in the file are kept in the overflow columns
	// instead (resource_attributes_overflow, scope_attributes_overflow,
	// attributes_overflow): a JSON object per row, so none is lost. It is
	// 1 to 30,000 (parquet-go's limit on a file's columns is 32,767).
	MaxAttributeColumns int
	// NoIndexes leaves out of logs files the counts and the body index
	// (docs/format/lake-parquet.md): for measuring what they cost.
	// Readers read such files' columns instead.
	NoIndexes bool

	// SchemaVersion is the version of the files written: 3 (the
	// default; 0 means it too: logs files of version 3, traces files of
	// version 2), 2 (both of version 2) or 1, the layout of earlier
	// releases; the older ones are kept for comparison (see
	// docs/format/lake-parquet.md).
	SchemaVersion int

	// ManualFlush leaves every write to the caller: Append never writes
	// a file, Due says when a batch reached its size, buffer or age
	// limit, FlushAs writes everything under names the caller chooses,
	// and Close drops what is buffered instead of writing it. It is for a
	// caller that replays its input after a crash (the spool consumer)
	// and needs each replayed range written under the same names.
	// Default false.
	ManualFlush bool
	// Clock is the clock used for ages and for the partition of records
	// without a timestamp. The default, nil, is time.Now.
	Clock func() time.Time
	// Drop, if set, is asked before each file is written which of its
	// rows to leave out: a RowMatcher, or nil for none. serve gives the
	// delete requests not carried out yet (internal/deletes), so that
	// the records they select, still on their way from the spool, never
	// reach the lake. The rows are encoded once in a scratch file, matched
	// there and encoded again without those matched; a matcher's error
	// leaves every row in (the delete pass removes them later). hour is
	// the file's partition.
	Drop func(sig otlpwire.Signal, tenant string, hour time.Time) RowMatcher
	// EncodeFault, if not empty, makes the encoding of every file that
	// holds a log whose body, or a span whose name, is EncodeFault fail
	// with ErrEncode, as if the encoder could not write it. It exists to
	// test how callers handle ErrEncode; a server leaves it empty.
	EncodeFault string
}

// DefaultWriterConfig returns the defaults, without a Dir: 64 MiB files,
// 256 MiB buffered per batch, 5 minutes' max age, row groups of 131,072
// rows, DefaultMaxAttributeColumns, automatic flushes, the lake in Dir
// and time.Now.
func DefaultWriterConfig() WriterConfig {
	return WriterConfig{
		FileSize:            64 << 20,
		MaxBuffer:           256 << 20,
		MaxAge:              5 * time.Minute,
		RowGroupRows:        128 << 10,
		MaxAttributeColumns: DefaultMaxAttributeColumns,
		SchemaVersion:       LogsSchemaVersion,
	}
}

// Validate reports the first field of c that NewWriter would refuse.
func (c WriterConfig) Validate() error {
	switch {
	case c.Bucket == nil && c.Dir == "":
		return errors.New("lake writer: Dir not set")
	case c.Bucket != nil && c.Dir != "":
		return errors.New("lake writer: Dir and Bucket both set (a Writer with a Bucket encodes in ScratchDir)")
	case c.Bucket == nil && c.ScratchDir != "":
		return errors.New("lake writer: ScratchDir set without a Bucket (a lake in Dir encodes in Dir)")
	case c.FileSize < 1<<10:
		return fmt.Errorf("lake writer: FileSize %d, below 1 KiB", c.FileSize)
	case c.MaxBuffer < 1<<10:
		return fmt.Errorf("lake writer: MaxBuffer %d, below 1 KiB", c.MaxBuffer)
	case c.MaxAge <= 0:
		return fmt.Errorf("lake writer: MaxAge %v, must be positive", c.MaxAge)
	case c.RowGroupRows < 1:
		return fmt.Errorf("lake writer: RowGroupRows %d, must be positive", c.RowGroupRows)
	case c.SchemaVersion < 0 || c.SchemaVersion > LogsSchemaVersion:
		return fmt.Errorf("lake writer: SchemaVersion %d, want 1, 2 or 3", c.SchemaVersion)
	case c.MaxAttributeColumns < 1 || c.MaxAttributeColumns > 30000:
		return fmt.Errorf("lake writer: MaxAttributeColumns %d, want 1 to 30000", c.MaxAttributeColumns)
	}
	return nil
}

// config is a valid WriterConfig with its nil Clock set, and a setting
// only tests change.
type config struct {
	WriterConfig
	noSync bool // tests only: skip fsync, which costs ~10 ms a file here
}
