package pebble

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/weirstream/weir/state"
)

// The changelog: incremental checkpoints that ship Pebble's WAL instead of
// flushing the memtables (Options.DisableChangelog false, the default;
// Flink's changelog state backend, FLIP-158, whose "materialization" is
// here Pebble's own memtable flush).
//
// Flushing at every checkpoint wrote a small L0 SST overlapping every key
// each interval; the L0 compactions that followed rewrote Lbase, and the
// next checkpoint uploaded the rewritten files again (Nexmark q18, 2 M
// events, 1 s checkpoints: 1.5 GB uploaded for a few hundred MB of state,
// a 40 % throughput loss, mostly compaction CPU). With the WAL on, the
// synchronous part is a Pebble checkpoint with the WAL flushed to its file
// (no fsync: noSyncFS): hard links of the SSTs, a copy of the live WAL
// files. The memtables flush when full, as with checkpoints off.
//
// A WAL file only grows: Pebble appends records to it and closes it when
// its memtable is full, and noSyncFS.ReuseForWrite never lets Pebble
// recycle an old file. So the asynchronous part uploads, for each WAL file
// of the checkpoint, only the bytes past what the storage holds, as a
// shared chunk named by the file and the byte range,
// "<group>/<file>.log.<from>-<to>" — one name, one content, as for SSTs:
// two checkpoints in flight that both upload from the same offset write
// different names. The manifest lists each WAL file's chunks in order;
// the restore concatenates them into the file and Pebble replays it when
// it opens the database. A WAL file leaves the checkpoints once its
// memtable is flushed (its records are in an SST the checkpoint names),
// and its chunks are then collected as any shared file no retained
// checkpoint names.

// manifestLog is one WAL file of the database: its local name and the
// chunks whose concatenation, in order, is its content at the checkpoint.
type manifestLog struct {
	Name   string             `json:"name"`
	Chunks []state.FileHandle `json:"chunks"`
}

// isLog tells a WAL file of a Pebble checkpoint.
func isLog(name string) bool { return strings.HasSuffix(name, ".log") }

// chainEnd is the length of the WAL content the chunks hold.
func chainEnd(chunks []state.FileHandle) int64 {
	var n int64
	for _, c := range chunks {
		n += c.Size
	}
	return n
}

// logChunk is a chunk of a WAL file to upload.
type logChunk struct {
	log  string // the WAL file's name
	file state.LocalFile
}

// newChunks writes, for each WAL file of the local checkpoint, the bytes
// past the end of the chunks the storage holds (have) into a file of
// their own in the checkpoint's directory, and returns those to upload.
func (lc *localCheckpoint) newChunks(logs []string, have map[string][]state.FileHandle) ([]logChunk, error) {
	var out []logChunk
	for _, log := range logs {
		from := chainEnd(have[log])
		to, err := lc.copyTail(log, from)
		if err != nil {
			return nil, err
		}
		if to == from {
			continue
		}
		name := fmt.Sprintf("%s.%d-%d", log, from, to)
		out = append(out, logChunk{log: log, file: state.LocalFile{
			Name: lc.up.group + "/" + name, Path: filepath.Join(lc.dir, name), Shared: true}})
	}
	return out, nil
}

// copyTail copies the bytes of WAL file log from offset from to its end
// into "<log>.<from>-<end>" beside it, unless there are none, and returns
// the end.
func (lc *localCheckpoint) copyTail(log string, from int64) (end int64, err error) {
	src, err := os.Open(filepath.Join(lc.dir, log))
	if err != nil {
		return 0, fmt.Errorf("pebble: reading WAL of local checkpoint: %w", err)
	}
	defer src.Close()
	fi, err := src.Stat()
	if err != nil {
		return 0, fmt.Errorf("pebble: reading WAL of local checkpoint: %w", err)
	}
	end = fi.Size()
	switch {
	case end < from:
		// Never: a WAL file only grows (see noSyncFS.ReuseForWrite).
		return 0, fmt.Errorf("pebble: WAL %s is %d bytes, shorter than the %d already in checkpoint storage", log, end, from)
	case end == from:
		return end, nil
	}
	dst, err := os.Create(filepath.Join(lc.dir, fmt.Sprintf("%s.%d-%d", log, from, end)))
	if err != nil {
		return 0, fmt.Errorf("pebble: WAL chunk of local checkpoint: %w", err)
	}
	_, err = io.Copy(dst, io.NewSectionReader(src, from, end-from))
	if err = errors.Join(err, dst.Close()); err != nil {
		return 0, fmt.Errorf("pebble: WAL chunk of local checkpoint: %w", err)
	}
	return end, nil
}

// manifestLogs returns the manifest's WAL files: each the chunks the
// storage held before and the one just uploaded, if any.
func manifestLogs(logs []string, have map[string][]state.FileHandle, put []logChunk, hs []state.FileHandle) []manifestLog {
	added := map[string]state.FileHandle{}
	for i, c := range put {
		added[c.log] = hs[i]
	}
	out := make([]manifestLog, 0, len(logs))
	for _, log := range logs {
		chunks := slices.Clone(have[log])
		if h, ok := added[log]; ok {
			chunks = append(chunks, h)
		}
		out = append(out, manifestLog{Name: log, Chunks: chunks})
	}
	return out
}
