// Package filesystem is Flink's filesystem connector for line formats
// (csv, json, changelogs) and bulk formats (parquet, see BulkFormat): a
// bounded source (one split per file, position = byte offset of the next
// line, or block and row of a bulk file) and an exactly-once sink whose part files become visible
// only when the checkpoint that covers them completes (in-progress →
// pending at the barrier → finished on commit, as Flink's FileSink does).
package filesystem

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/weirstream/weir/connector/format"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/operator"
	"github.com/weirstream/weir/types"
)

// Source reads every line of the files under Path (a file or a directory,
// hidden files skipped) as one row each.
type Source struct {
	Path   string
	Format format.Format
	// Changelog, when set, reads each line instead of Format: a line of a
	// changelog format (debezium-json, …) gives zero or more rows, each
	// with its kind.
	Changelog format.Changelog
	// Bulk, when set, reads whole files of a bulk format (parquet)
	// instead of lines.
	Bulk BulkFormat
	// PartitionCols, when set, are the table's PARTITIONED BY columns:
	// the files are those of Path's col=value/… directories (in
	// PARTITIONED BY's order), and each row gets the values of its file's
	// directory, parsed by ParsePartition (value unescaped; nil for a
	// NULL), inserted at PartitionIdx; Format and Bulk read the other
	// columns.
	PartitionCols  []string
	PartitionIdx   []int
	ParsePartition func(col int, value string) (any, error)
	// OnBadLine decides about a line that does not parse (err is a
	// *LineError): return nil to skip it, an error to fail the job.
	// Default: fail with the *LineError.
	OnBadLine func(file string, line int64, err error) error
	// BadLineFix is the advice of a *LineError: how to continue past such
	// lines. Default: the Go API's (OnBadLine).
	BadLineFix string
}

// LineError is a line of a file that does not parse. A restart reads the
// line again, so it is an operator.PositionedError: the same error on the
// same line twice fails the job instead of restarting it forever.
type LineError struct {
	File string
	Line int64
	Err  error
	// Fix is how to continue past such lines (Source.BadLineFix).
	Fix string
}

// Error implements error.
func (e *LineError) Error() string {
	fix := e.Fix
	if fix == "" {
		fix = "set filesystem.Source.OnBadLine"
	}
	return fmt.Sprintf("filesystem: %s line %d: %v (to continue past such lines %s)", e.File, e.Line, e.Err, fix)
}

// Position implements operator.PositionedError.
func (e *LineError) Position() string { return fmt.Sprintf("file %s line %d", e.File, e.Line) }

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *LineError) Unwrap() error { return e.Err }

// Bounded implements operator.Source.
func (s *Source) Bounded() bool { return true }

// Enumerate lists the files; each is a split starting at offset 0.
func (s *Source) Enumerate(context.Context) ([]operator.SplitState, error) {
	files, err := listFiles(s.Path, len(s.PartitionCols))
	if err != nil {
		return nil, err
	}
	out := make([]operator.SplitState, len(files))
	for i, f := range files {
		out[i] = operator.SplitState{ID: f, Position: encodePos(0, 0)}
	}
	return out, nil
}

// listFiles lists the files of path, or of its directories depth levels
// down (partition directories), not hidden ones (. or _).
func listFiles(path string, depth int) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("filesystem: %w", err)
	}
	var files []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || strings.HasPrefix(e.Name(), "_") || e.IsDir() != (depth > 0) {
			continue
		}
		if depth == 0 {
			files = append(files, filepath.Join(path, e.Name()))
			continue
		}
		sub, err := listFiles(filepath.Join(path, e.Name()), depth-1)
		if err != nil {
			return nil, err
		}
		files = append(files, sub...)
	}
	sort.Strings(files)
	return files, nil
}

// withPartition inserts the partition values of sp's directory into the
// data columns read from the file.
func (r *reader) withPartition(sp *split, data []any) ([]any, error) {
	if len(r.s.PartitionCols) == 0 {
		return data, nil
	}
	if sp.partition == nil {
		rel, err := filepath.Rel(r.s.Path, filepath.Dir(sp.file))
		if err != nil {
			return nil, err
		}
		strs, err := partitionOf(filepath.ToSlash(rel), r.s.PartitionCols)
		if err != nil {
			return nil, fmt.Errorf("filesystem: %s: %w", sp.file, err)
		}
		sp.partition = make([]any, len(strs))
		for i, v := range strs {
			if sp.partition[i], err = r.s.ParsePartition(i, v); err != nil {
				return nil, fmt.Errorf("filesystem: %s: partition column %s: %w", sp.file, r.s.PartitionCols[i], err)
			}
		}
	}
	out := make([]any, len(data)+len(sp.partition))
	next := 0
	for i := range out {
		if k := slices.Index(r.s.PartitionIdx, i); k >= 0 {
			out[i] = sp.partition[k]
			continue
		}
		out[i] = data[next]
		next++
	}
	return out, nil
}

func encodePos(offset, line int64) []byte {
	return binary.AppendUvarint(binary.AppendUvarint(nil, uint64(offset)), uint64(line))
}

func decodePos(b []byte) (offset, line int64, err error) {
	o, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, 0, fmt.Errorf("filesystem: corrupt position")
	}
	l, k2 := binary.Uvarint(b[k:])
	if k2 <= 0 {
		return 0, 0, fmt.Errorf("filesystem: corrupt position")
	}
	return int64(o), int64(l), nil
}

// CreateReader implements operator.Source.
func (s *Source) CreateReader(operator.ReaderContext) (operator.SourceReader, error) {
	return &reader{s: s}, nil
}

type split struct {
	file         string
	offset, line int64
	f            *os.File
	r            *bufio.Reader
	bulk         *bulkSplit // Source.Bulk's file; offset, line are its block, row
	partition    []any      // the values of the file's partition directory
	done         bool
}

type reader struct {
	s      *Source
	splits []*split
}

func (r *reader) AddSplits(ss []operator.SplitState) error {
	for _, sp := range ss {
		off, line, err := decodePos(sp.Position)
		if err != nil {
			return err
		}
		r.splits = append(r.splits, &split{file: sp.ID, offset: off, line: line})
	}
	return nil
}

// Poll reads one line of the first split not finished. A split finishes
// at the end of its file, reported to out right after its last line (see
// operator.SplitListener), so a file read to its end no longer holds back
// the subtask's watermark while the next file is read.
func (r *reader) Poll(out operator.ReaderOutput) (operator.ReaderStatus, error) {
	for _, sp := range r.splits {
		if sp.done {
			continue
		}
		if r.s.Bulk != nil {
			return operator.MoreAvailable, r.readBulk(sp, out)
		}
		return operator.MoreAvailable, r.readLine(sp, out)
	}
	return operator.EndOfInput, nil
}

func (r *reader) readLine(sp *split, out operator.ReaderOutput) error {
	if sp.f == nil {
		f, err := os.Open(sp.file)
		if err != nil {
			return fmt.Errorf("filesystem: %w", err)
		}
		if _, err := f.Seek(sp.offset, io.SeekStart); err != nil {
			return err
		}
		sp.f, sp.r = f, bufio.NewReader(f)
	}
	text, err := sp.r.ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("filesystem: %s: %w", sp.file, err)
	}
	sp.offset += int64(len(text))
	if text != "" {
		sp.line++
	}
	if line := strings.TrimRight(text, "\r\n"); line != "" {
		if err := r.emit(sp, line, out); err != nil {
			return err
		}
	}
	if err == io.EOF || sp.atEOF() {
		return r.finish(sp, out)
	}
	return nil
}

// atEOF reports whether nothing follows in the file. An error other than
// EOF is left for the next read to report.
func (sp *split) atEOF() bool {
	_, err := sp.r.Peek(1)
	return err == io.EOF
}

// finish closes the split's file and reports the split finished.
func (r *reader) finish(sp *split, out operator.ReaderOutput) error {
	sp.done = true
	operator.ReportSplitFinished(out, sp.file)
	return sp.f.Close()
}

func (r *reader) emit(sp *split, line string, out operator.ReaderOutput) error {
	rows, err := r.s.decode([]byte(line))
	if err != nil {
		err = &LineError{File: sp.file, Line: sp.line, Err: err, Fix: r.s.BadLineFix}
		if r.s.OnBadLine == nil {
			return err
		}
		return r.s.OnBadLine(sp.file, sp.line, err)
	}
	for _, row := range rows {
		if row.Fields, err = r.withPartition(sp, row.Fields); err != nil {
			return err
		}
		out.Collect(sp.file, event.Record{Value: row, Timestamp: event.NoTimestamp})
	}
	return nil
}

// decode reads one line into its rows.
func (s *Source) decode(line []byte) ([]event.Row, error) {
	if s.Changelog != nil {
		return s.Changelog.DecodeChanges(line)
	}
	fields, err := s.Format.Decode(line)
	if err != nil {
		return nil, err
	}
	return []event.Row{{Kind: event.Insert, Fields: fields}}, nil
}

func (r *reader) Available() <-chan struct{} { return nil }

func (r *reader) SnapshotState(event.CheckpointID) ([]operator.SplitState, error) {
	out := make([]operator.SplitState, len(r.splits))
	for i, sp := range r.splits {
		out[i] = operator.SplitState{ID: sp.file, Position: encodePos(sp.offset, sp.line)}
	}
	return out, nil
}

func (r *reader) NotifyCheckpointComplete(event.CheckpointID) error { return nil }

func (r *reader) Close() error {
	for _, sp := range r.splits {
		if sp.f != nil && !sp.done {
			sp.f.Close()
		}
		if sp.bulk != nil && !sp.done {
			sp.bulk.r.Close()
			sp.bulk.f.Close()
		}
	}
	return nil
}

// Sink writes rows as lines into part files under Dir. With Format only
// insert rows are accepted (the planner rejects updating input for this
// sink); with Changelog (debezium-json, …) rows of every kind are written.
// With PartitionCols each row goes into the Hive-style directory of its
// partition values (col=value/…, see PartitionPath); the partition columns
// (at PartitionIdx in the row) are not written into the file, as in Flink,
// so Format/Changelog encode the other columns.
type Sink struct {
	Dir       string
	Format    format.Format
	Changelog format.Changelog
	// Bulk, when set, writes files of a bulk format (parquet) instead of
	// lines: each part file is one file of the format.
	Bulk BulkFormat

	PartitionCols    []string
	PartitionIdx     []int
	DefaultPartition string // 'partition.default-name'; DefaultPartitionName when empty
	// PartitionTypes are the partition columns' SQL types, for their
	// directory values (a DATE as 2024-01-01, a FLOAT as Java prints it).
	// Default nil: rendered by their Go values (a DATE as a timestamp).
	PartitionTypes []types.Type
	// Commit commits partitions ('sink.partition-commit.*'); nil: never.
	Commit *CommitPolicy
	// Now is the processing-time clock (time.Now when nil).
	Now func() time.Time
	// Rolling rolls part files between checkpoints; the zero value rolls
	// only at checkpoints.
	Rolling RollingPolicy
	// Name is the table's name, for errors ("" outside SQL).
	Name string
	// AllowReplay is `sink.allow-replay` (Weir's): accept a restore of a
	// checkpoint older than the newest one whose part files the sink
	// already committed, writing their rows again (a warning). Without it
	// such a restore fails with an operator.ReplayError (see replay.go).
	AllowReplay bool
}

// RollingPolicy is Flink's 'sink.rolling-policy.*' for row formats: a part
// file is closed (and a new one started) once it holds FileSize bytes, or,
// checked every CheckInterval of processing time when rows or watermarks
// arrive, once it is RolloverInterval old or InactivityInterval idle. A
// rolled file stays hidden until the next checkpoint, as every file.
// Zero fields are off.
type RollingPolicy struct {
	FileSize           int64
	RolloverInterval   time.Duration
	InactivityInterval time.Duration
	CheckInterval      time.Duration
}

// encode writes one row (its partition columns already dropped) as a
// line, into line's memory when the format appends (format.Appender):
// the writer reuses one buffer for all its lines.
func (s *Sink) encode(line []byte, row event.Row) ([]byte, error) {
	if s.Changelog != nil {
		return s.Changelog.EncodeChange(row)
	}
	if a, ok := s.Format.(format.Appender); ok {
		return a.AppendEncode(line[:0], row.Fields)
	}
	return s.Format.Encode(row.Fields)
}

// partition splits row into its partition: the directory (relative to
// Dir, "" when unpartitioned) and its values, and the row of the other
// columns, in a buffer that the next row reuses (the row is written before
// then). Rows mostly come to the partition of the row before, whose strings
// and directory are kept.
func (w *fileWriter) partition(row event.Row) (string, []string, event.Row) {
	s := w.s
	if len(s.PartitionIdx) == 0 {
		return "", nil, row
	}
	if !w.samePartition(row.Fields) {
		raw := make([]any, len(s.PartitionIdx))
		for i, ix := range s.PartitionIdx {
			raw[i] = row.Fields[ix]
		}
		def := s.DefaultPartition
		if def == "" {
			def = DefaultPartitionName
		}
		values := partitionStrings(raw, s.PartitionTypes, def)
		if w.lastValues == nil || !slices.Equal(values, w.lastValues) {
			w.lastValues, w.lastDir = values, partitionDir(s.PartitionCols, values)
		}
		w.lastRaw = raw
	}
	w.data = w.data[:0]
	for i, v := range row.Fields {
		if !slices.Contains(s.PartitionIdx, i) {
			w.data = append(w.data, v)
		}
	}
	return w.lastDir, w.lastValues, event.Row{Kind: row.Kind, Fields: w.data}
}

// samePartition tells whether fields' partition values are those of the
// last row, compared as strings or integers (other types: not known to be
// the same, so the directory is worked out again).
func (w *fileWriter) samePartition(fields []any) bool {
	if w.lastRaw == nil {
		return false
	}
	for i, ix := range w.s.PartitionIdx {
		if !sameScalar(fields[ix], w.lastRaw[i]) {
			return false
		}
	}
	return true
}

func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case int64, int32, int16, int8, bool:
		return a == b
	}
	return false
}

// CreateWriter refuses a restore older than the committed output (see
// replay.go), removes this subtask's leftovers — in-progress files, and
// pending files of checkpoints newer than the restored one — and starts.
func (s *Sink) CreateWriter(ctx operator.WriterContext) (operator.SinkWriter, error) {
	if err := s.checkNotAhead(ctx); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("filesystem sink: %w", err)
	}
	w := &fileWriter{s: s, subtask: ctx.Subtask.Index, run: newRunID(), open: map[string]*partFile{},
		commits: PartitionCommits{Policy: s.Commit}, watermark: math.MinInt64, log: ctx.Logger}
	if w.log == nil {
		w.log = slog.Default()
	}
	if err := w.cleanup(ctx.RestoredCheckpoint); err != nil {
		return nil, err
	}
	for _, b := range ctx.WriterState {
		if err := w.commits.restore(b); err != nil {
			return nil, err
		}
	}
	w.dropRestoredWithoutPolicy()
	return w, nil
}

// dropRestoredWithoutPolicy drops, saying so, the pending partitions of a
// checkpoint taken while the table had a partition commit policy, restored
// into a table that has none: nothing would commit them.
func (w *fileWriter) dropRestoredWithoutPolicy() {
	if w.s.Commit != nil || len(w.commits.Pending) == 0 {
		return
	}
	n, names := partitionList(w.commits.Pending)
	w.log.Warn("filesystem sink: the restored checkpoint holds partitions waiting for their commit, but the table sets no partition commit "+
		"('sink.partition-commit.policy.kind'): they stay without a success file",
		"table", w.s.Name, "path", w.s.Dir, "subtask", w.subtask, "partitions", n, "uncommitted", names)
	w.commits.Pending = nil
}

// partitionList is the number of partitions in pending and their names,
// sorted, at most maxNamed of them.
func partitionList(pending map[string]int64) (int, string) {
	rels := slices.Sorted(maps.Keys(pending))
	n := len(rels)
	if n > maxNamed {
		rels = append(rels[:maxNamed], fmt.Sprintf("… and %d more", n-maxNamed))
	}
	return n, strings.Join(rels, ", ")
}

// CreateCommitter implements operator.Sink.
func (s *Sink) CreateCommitter(ctx operator.WriterContext) (operator.Committer, error) {
	c := committer{dir: s.Dir, job: ctx.JobID, subtask: ctx.Subtask.Index}
	if s.Commit != nil {
		c.successFile = s.Commit.SuccessFile
	}
	return c, nil
}

type fileWriter struct {
	s       *Sink
	subtask int
	run     string               // unique per writer: part files of separate runs never share a name
	open    map[string]*partFile // the in-progress file of each partition directory
	rows    int
	line    []byte // the last line written, whose memory the next one reuses
	// lastRaw, lastValues and lastDir are the partition of the last row
	// written: its column values, their strings, its directory.
	lastRaw    []any
	lastValues []string
	lastDir    string
	data       []any // the last row's columns but the partition's

	rolled    []rolledFile
	rolls     int              // counter of rolled files, for their names
	lastCheck time.Time        // the rolling policy's last time check
	commits   PartitionCommits // partitions waiting for their commit (Sink.Commit set)
	watermark event.Timestamp
	ended     bool         // end of input: every partition commits
	log       *slog.Logger // the subtask's
}

func (w *fileWriter) now() time.Time {
	if w.s.Now != nil {
		return w.s.Now()
	}
	return time.Now()
}

// ProcessWatermark keeps the watermark for the partition-time trigger.
func (w *fileWriter) ProcessWatermark(wm event.Timestamp) error {
	w.watermark = max(w.watermark, wm)
	return w.checkRolling(w.now())
}

// checkRolling rolls the files that are too old or idle, at most once per
// check interval.
func (w *fileWriter) checkRolling(now time.Time) error {
	p := w.s.Rolling
	if p.RolloverInterval <= 0 && p.InactivityInterval <= 0 || now.Sub(w.lastCheck) < p.CheckInterval {
		return nil
	}
	w.lastCheck = now
	for _, rel := range w.openDirs() {
		pf := w.open[rel]
		old := p.RolloverInterval > 0 && now.Sub(pf.created) >= p.RolloverInterval
		idle := p.InactivityInterval > 0 && now.Sub(pf.lastRow) >= p.InactivityInterval
		if old || idle {
			if err := w.roll(rel); err != nil {
				return err
			}
		}
	}
	return nil
}

// roll closes partition rel's in-progress file under a name of its own;
// it becomes pending at the next barrier.
func (w *fileWriter) roll(rel string) error {
	if err := w.closeFile(rel); err != nil {
		return err
	}
	w.rolls++
	tag := fmt.Sprintf("%sr%d", w.run, w.rolls)
	w.rolled = append(w.rolled, rolledFile{rel: rel, tag: tag})
	return os.Rename(w.inProgress(rel), filepath.Join(w.s.Dir, rel, fmt.Sprintf(".part-%s-%d.inprogress", tag, w.subtask)))
}

func (w *fileWriter) openDirs() []string {
	rels := make([]string, 0, len(w.open))
	for rel := range w.open {
		rels = append(rels, rel)
	}
	slices.Sort(rels)
	return rels
}

// partBuffer is the size of a part file's write buffer. bufio's default
// 4 KB made a write system call every 50 rows of Nexmark q10, a tenth of
// its CPU; at 64 KB the calls cost about 1 %, and a writer with many
// partitions open holds 64 KB for each.
const partBuffer = 64 << 10

// partFile is the in-progress part file of one partition directory.
type partFile struct {
	f       *os.File
	buf     *bufio.Writer
	bulk    BulkWriter // writes into buf for a Sink.Bulk
	size    int64
	created time.Time
	lastRow time.Time
}

// rolledFile is a part file rolled before its checkpoint's barrier: hidden
// as .part-<run>r<n>-<subtask>.inprogress until PrepareCommit.
type rolledFile struct{ rel, tag string }

// Part files are named part-<run>-<subtask>-<checkpoint> (Flink's
// part-<uuid>-<subtask>-<counter>): run is random per writer, so a job run
// again into the same directory — its checkpoint ids starting over — adds
// files and never replaces an earlier run's. While open a file is hidden
// as .part-<run>-<subtask>.inprogress; after its checkpoint's barrier it is
// .part-<run>-<subtask>-<checkpoint>.pending until the commit renames it.
// Each partition directory has its own files of these names.

// newRunID returns 8 random hex digits.
func newRunID() string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand does not fail on Linux
	}
	return hex.EncodeToString(b[:])
}

func (w *fileWriter) inProgress(rel string) string {
	return filepath.Join(w.s.Dir, rel, fmt.Sprintf(".part-%s-%d.inprogress", w.run, w.subtask))
}

// hiddenPart parses a hidden part file name of any run: its subtask, and
// its checkpoint id for a pending file (0 for an in-progress one).
func hiddenPart(name string) (subtask int, id event.CheckpointID, ok bool) {
	rest, found := strings.CutPrefix(name, ".part-")
	if !found {
		return 0, 0, false
	}
	var fields []string
	if r, inProgress := strings.CutSuffix(rest, ".inprogress"); inProgress {
		fields = append(strings.Split(r, "-"), "0")
	} else if r, pending := strings.CutSuffix(rest, ".pending"); pending {
		fields = strings.Split(r, "-")
	}
	if len(fields) != 3 {
		return 0, 0, false
	}
	sub, err1 := strconv.Atoi(fields[1])
	n, err2 := strconv.ParseInt(fields[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return sub, event.CheckpointID(n), true
}

// cleanup removes this subtask's leftovers of earlier attempts, whatever
// their run and partition directory: in-progress files, and pending files
// of checkpoints newer than the restored one (their checkpoint never
// completed).
func (w *fileWriter) cleanup(restored event.CheckpointID) error {
	return filepath.WalkDir(w.s.Dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		sub, id, ok := hiddenPart(d.Name())
		if ok && sub == w.subtask && (id == 0 || id > restored) {
			return os.Remove(path)
		}
		return nil
	})
}

func (w *fileWriter) Write(r event.Record) error {
	row, ok := r.Value.(event.Row)
	if !ok {
		return fmt.Errorf("filesystem sink: want rows, got %T", r.Value)
	}
	if row.Kind != event.Insert && w.s.Changelog == nil {
		return fmt.Errorf("filesystem sink: %s rows are not supported (append only)", row.Kind)
	}
	now := w.now()
	// The policy's timer, fired as this row arrives: files too old or idle
	// roll before it is written.
	if err := w.checkRolling(now); err != nil {
		return err
	}
	rel, values, row := w.partition(row)
	if w.s.Commit != nil {
		if err := w.commits.Written(rel, values, now); err != nil {
			return fmt.Errorf("filesystem sink: partition %s: %w", rel, err)
		}
	}
	pf := w.open[rel]
	if pf == nil {
		if err := os.MkdirAll(filepath.Join(w.s.Dir, rel), 0o755); err != nil {
			return fmt.Errorf("filesystem sink: %w", err)
		}
		f, err := os.Create(w.inProgress(rel))
		if err != nil {
			return fmt.Errorf("filesystem sink: %w", err)
		}
		pf = &partFile{f: f, buf: bufio.NewWriterSize(f, partBuffer), created: now}
		w.open[rel] = pf
		if w.s.Bulk != nil {
			if pf.bulk, err = w.s.Bulk.NewWriter(pf.buf); err != nil {
				return fmt.Errorf("filesystem sink: %w", err)
			}
		}
	}
	if err := w.writeRow(pf, row); err != nil {
		return err
	}
	w.rows++
	pf.lastRow = now
	if w.s.Rolling.FileSize > 0 && pf.size >= w.s.Rolling.FileSize {
		return w.roll(rel)
	}
	return nil
}

// writeRow writes row into pf: a line, or a row of the bulk file.
func (w *fileWriter) writeRow(pf *partFile, row event.Row) error {
	if pf.bulk != nil {
		if err := pf.bulk.Write(row.Fields); err != nil {
			return fmt.Errorf("filesystem sink: %s: %w", pf.f.Name(), err)
		}
		pf.size = pf.bulk.Size()
		return nil
	}
	line, err := w.s.encode(w.line, row)
	w.line = line
	if err != nil {
		return err
	}
	pf.buf.Write(line)
	if err := pf.buf.WriteByte('\n'); err != nil {
		return err
	}
	pf.size += int64(len(line)) + 1
	return nil
}

func (w *fileWriter) Flush(endOfInput bool) error {
	w.ended = w.ended || endOfInput
	return nil
}

// PrepareCommit closes the in-progress files and renames them pending for
// checkpoint id; the committables are the pending files' paths relative
// to Dir.
func (w *fileWriter) PrepareCommit(id event.CheckpointID) ([][]byte, error) {
	var out [][]byte
	for _, r := range w.rolled {
		pending := filepath.Join(r.rel, fmt.Sprintf(".part-%s-%d-%d.pending", r.tag, w.subtask, id))
		from := filepath.Join(w.s.Dir, r.rel, fmt.Sprintf(".part-%s-%d.inprogress", r.tag, w.subtask))
		if err := os.Rename(from, filepath.Join(w.s.Dir, pending)); err != nil {
			return nil, err
		}
		out = append(out, []byte(pending))
	}
	w.rolled = nil
	for _, rel := range w.openDirs() {
		pending, err := w.closePending(rel, id)
		if err != nil {
			return nil, err
		}
		out = append(out, []byte(pending))
	}
	if w.s.Commit != nil {
		// After the files: the committer renames them, then commits.
		for _, rel := range w.commits.Ready(w.watermark, w.now(), w.ended) {
			out = append(out, []byte(successMark+rel))
		}
	}
	return out, nil
}

// closePending closes partition rel's in-progress file and renames it
// pending; it returns the pending file's path relative to Dir.
func (w *fileWriter) closePending(rel string, id event.CheckpointID) (string, error) {
	if err := w.closeFile(rel); err != nil {
		return "", err
	}
	pending := filepath.Join(rel, fmt.Sprintf(".part-%s-%d-%d.pending", w.run, w.subtask, id))
	if err := os.Rename(w.inProgress(rel), filepath.Join(w.s.Dir, pending)); err != nil {
		return "", err
	}
	return pending, nil
}

// closeFile flushes, syncs and closes partition rel's in-progress file.
func (w *fileWriter) closeFile(rel string) error {
	pf := w.open[rel]
	delete(w.open, rel)
	if pf.bulk != nil {
		if err := pf.bulk.Close(); err != nil {
			return fmt.Errorf("filesystem sink: %s: %w", pf.f.Name(), err)
		}
	}
	if err := pf.buf.Flush(); err != nil {
		return err
	}
	if err := pf.f.Sync(); err != nil {
		return err
	}
	return pf.f.Close()
}

// SnapshotState keeps the partitions still waiting for their commit.
func (w *fileWriter) SnapshotState(event.CheckpointID) ([]byte, error) {
	if w.s.Commit == nil {
		return nil, nil
	}
	return w.commits.encode()
}

// Close removes the in-progress files (their rows are after the last
// checkpoint; a restored job writes them again) and says which partitions
// it leaves without their commit.
func (w *fileWriter) Close() error {
	for rel, pf := range w.open {
		pf.f.Close()
		os.Remove(w.inProgress(rel))
	}
	w.open = nil
	w.warnUncommitted()
	return nil
}

// maxNamed is the most partitions a warning names.
const maxNamed = 20

// warnUncommitted logs the partitions still waiting for their commit
// trigger when the writer closes before the end of its input (a cancel, a
// failure): none of them has its success file. A job restored from the
// latest checkpoint or savepoint commits them when their trigger fires:
// those written before it from its state, the others as it writes their
// rows again. Not listed are partitions whose trigger fired at a checkpoint
// that has not completed: they are in its committables, and a restore
// commits them as well.
func (w *fileWriter) warnUncommitted() {
	if w.s.Commit == nil || len(w.commits.Pending) == 0 {
		return
	}
	n, names := partitionList(w.commits.Pending)
	w.log.Warn("filesystem sink: closing before these partitions were committed; their commit trigger had not fired, so they have no success file. "+
		"A job restored from the latest checkpoint or savepoint commits them when it fires (those written after it once it writes their rows again); "+
		"a job not restored leaves them uncommitted",
		"table", w.s.Name, "path", w.s.Dir, "subtask", w.subtask, "partitions", n, "uncommitted", names,
		"trigger", w.s.Commit.Trigger)
}

type committer struct {
	dir         string
	job         string // the job id, naming its committed-checkpoint markers
	subtask     int
	successFile string // the success-file policy's file name
}

// Commit records checkpoint id in the subtask's committed-checkpoint
// marker, then renames each pending file to its final name; a file already
// finished is a success, a pending file that vanished is data loss.
func (c committer) Commit(_ context.Context, id event.CheckpointID, cs [][]byte) error {
	// Before the renames: after a crash between the two the marker may
	// name a checkpoint whose files are still pending (a restore of it
	// commits them), never the other way round.
	if err := writeMarker(c.dir, c.job, c.subtask, id); err != nil {
		return err
	}
	return c.commitFiles(cs)
}

// commitFiles renames the pending files and commits the partitions of cs.
func (c committer) commitFiles(cs [][]byte) error {
	for _, p := range cs {
		if rel, ok := strings.CutPrefix(string(p), successMark); ok {
			if err := c.commitPartition(rel); err != nil {
				return err
			}
			continue
		}
		pending := string(p)
		final := filepath.Join(filepath.Dir(pending), strings.TrimSuffix(strings.TrimPrefix(filepath.Base(pending), "."), ".pending"))
		err := os.Rename(filepath.Join(c.dir, pending), filepath.Join(c.dir, final))
		if os.IsNotExist(err) {
			if _, statErr := os.Stat(filepath.Join(c.dir, final)); statErr == nil {
				continue
			}
			return fmt.Errorf("filesystem sink: pending file %s is gone: %w", pending, operator.ErrDataLoss)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// commitPartition runs the success-file policy: an empty file named
// 'sink.partition-commit.success-file.name' in the partition directory
// (writing it again is harmless).
func (c committer) commitPartition(rel string) error {
	if c.successFile == "" {
		return nil
	}
	dir := filepath.Join(c.dir, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, c.successFile), nil, 0o644)
}

func (c committer) Close() error { return nil }
