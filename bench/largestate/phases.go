package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

// restoredMsg is the message the Pebble backend logs when it has restored
// an incremental checkpoint, with where the time went (state/pebble's
// restoreStats).
const restoredMsg = "pebble: restored incremental checkpoint"

// phaseHandler passes every record on to next and prints the Pebble
// backend's restore line for the parent too, as
//
//	EVENT restore-phases <ms since start> key=value …
type phaseHandler struct {
	next  slog.Handler
	start time.Time
	out   io.Writer
}

// watchRestorePhases makes the default logger a phaseHandler writing text
// to stderr. (Not around slog.Default's own handler: that one writes
// through the log package, which SetDefault routes back into the new
// handler, and the first record would deadlock.)
func watchRestorePhases(start time.Time) {
	next := slog.NewTextHandler(os.Stderr, nil)
	slog.SetDefault(slog.New(&phaseHandler{next: next, start: start, out: os.Stdout}))
}

func (h *phaseHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *phaseHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == restoredMsg {
		var b strings.Builder
		fmt.Fprintf(&b, "EVENT restore-phases %d", time.Since(h.start).Milliseconds())
		r.Attrs(func(a slog.Attr) bool {
			switch {
			case a.Value.Kind() == slog.KindInt64:
				fmt.Fprintf(&b, " %s=%d", a.Key, a.Value.Int64())
			case a.Key == "key_groups":
				fmt.Fprintf(&b, " %s=%s", a.Key, a.Value.String())
			}
			return true
		})
		fmt.Fprintln(h.out, b.String())
	}
	return h.next.Handle(ctx, r)
}

func (h *phaseHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &phaseHandler{next: h.next.WithAttrs(as), start: h.start, out: h.out}
}

func (h *phaseHandler) WithGroup(name string) slog.Handler {
	return &phaseHandler{next: h.next.WithGroup(name), start: h.start, out: h.out}
}

// Phases is one keyed subtask's restore: when it ended (from process
// start), its key groups, and the backend's counters and durations by
// name (fetch_ms, open_ms, bytes, copy_ms, …).
type Phases struct {
	At        time.Duration
	KeyGroups string // e.g. "[0..42]"
	Values    map[string]int64
}

// parsePhases reads the fields after "EVENT restore-phases".
func parsePhases(f []string) Phases {
	p := Phases{At: time.Duration(atoi(f, 2)) * time.Millisecond, Values: map[string]int64{}}
	for _, kv := range f[min(3, len(f)):] {
		k, v, ok := strings.Cut(kv, "=")
		if k == "key_groups" {
			p.KeyGroups = v
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); ok && err == nil {
			p.Values[k] = n
		}
	}
	return p
}

// String is the phases in a line of the report.
func (p Phases) String() string {
	v := p.Values
	ms := func(k string) string { return (time.Duration(v[k]) * time.Millisecond).String() }
	copied := ""
	if v["copied"] > 0 {
		copied = fmt.Sprintf(", copy of %d of %d sources %s (%s of entries)", v["copied"], v["sources"], ms("copy_ms"), mb(v["copied_bytes"]))
	}
	return fmt.Sprintf("key groups %s: fetch %s (%d files %s, WAL %d chunks %s), open %s (of it flush %s, compactions %s), clip %s%s; total %s, done at %s",
		p.KeyGroups, ms("fetch_ms"), v["files"], mb(v["bytes"]), v["wal_chunks"], mb(v["wal_bytes"]),
		ms("open_ms"), ms("open_flush_ms"), ms("open_compaction_ms"), ms("clip_ms"), copied, ms("total_ms"), p.At)
}
