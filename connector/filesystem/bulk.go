package filesystem

import (
	"fmt"
	"io"
	"os"

	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
)

// BulkFormat writes and reads whole files rather than lines (Flink's bulk
// formats: parquet). A bulk file is readable only once closed — its footer
// written — so, as in Flink's OnCheckpointRollingPolicy, the sink closes
// every in-progress bulk file at each checkpoint's barrier (Weir does this
// for row formats too) and may roll it earlier by size or time.
type BulkFormat interface {
	// NewWriter starts a file written to w.
	NewWriter(w io.Writer) (BulkWriter, error)
	// OpenReader reads the file named name (for errors) through r.
	OpenReader(name string, r io.ReaderAt, size int64) (BulkReader, error)
}

// BulkWriter writes the rows of one file.
type BulkWriter interface {
	// Write adds a row (its partition columns already dropped).
	Write(fields []any) error
	// Size is the file's size so far, buffered rows included (an
	// estimate, for the rolling policy's file size).
	Size() int64
	// Close writes what is buffered and the file's footer; it does not
	// close the io.Writer.
	Close() error
}

// BulkReader reads a file's rows in order. A position is a block of the
// file (a Parquet row group) and a row within it.
type BulkReader interface {
	// SeekTo moves to row of block.
	SeekTo(block, row int64) error
	// Next returns the next row's fields, io.EOF after the last.
	Next() ([]any, error)
	// Position is the position of the row Next returns next.
	Position() (block, row int64)
	Close() error
}

// bulkSplit is a file of a bulk format being read.
type bulkSplit struct {
	f *os.File
	r BulkReader
}

// readBulk emits the next row of sp's bulk file.
func (r *reader) readBulk(sp *split, out operator.ReaderOutput) error {
	if sp.bulk == nil {
		if err := r.openBulk(sp); err != nil {
			return err
		}
	}
	fields, err := sp.bulk.r.Next()
	if err == io.EOF {
		sp.done = true
		operator.ReportSplitFinished(out, sp.file)
		sp.bulk.r.Close()
		return sp.bulk.f.Close()
	}
	if err != nil {
		return err
	}
	sp.offset, sp.line = sp.bulk.r.Position()
	if fields, err = r.withPartition(sp, fields); err != nil {
		return err
	}
	out.Collect(sp.file, event.Record{Value: event.Row{Kind: event.Insert, Fields: fields}, Timestamp: event.NoTimestamp})
	return nil
}

// openBulk opens sp's file at its position (block, row).
func (r *reader) openBulk(sp *split) error {
	f, err := os.Open(sp.file)
	if err != nil {
		return fmt.Errorf("filesystem: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("filesystem: %w", err)
	}
	br, err := r.s.Bulk.OpenReader(sp.file, f, st.Size())
	if err == nil {
		err = br.SeekTo(sp.offset, sp.line)
	}
	if err != nil {
		f.Close()
		return err
	}
	sp.bulk = &bulkSplit{f: f, r: br}
	return nil
}
