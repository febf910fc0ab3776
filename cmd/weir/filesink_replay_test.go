package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The new-user trial's bug: a job writing through the filesystem sink is
// killed (SIGKILL) after it committed the part files of checkpoint K;
// the job is then restored from checkpoint K-1 (as --restore latest does
// when chk-K is corrupt). Going on would write the rows of the part files
// of checkpoints ≥ K again: weir run refuses, naming the table, its path,
// both checkpoints and 'sink.allow-replay', and touches nothing; with
// 'sink.allow-replay' = 'true' on the table it runs to the end, and the
// output holds every id once plus, twice, exactly the ids of the first
// run's part files of checkpoints ≥ K.
func TestFileSinkRefusesReplayOfCommittedOutput(t *testing.T) {
	dir := t.TempDir()
	out, ckDir := filepath.Join(dir, "out"), filepath.Join(dir, "ck")
	script := filepath.Join(dir, "job.sql")
	writeJob := func(extra string) {
		err := os.WriteFile(script, []byte(fmt.Sprintf(`
SET 'execution.checkpointing.interval' = '100 ms';
SET 'execution.checkpointing.num-retained' = '1000';
SET 'parallelism.default' = '1';
CREATE TABLE gen (id BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '200', 'number-of-rows' = '2000',
  'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '2000');
CREATE TABLE sink (id BIGINT) WITH ('connector' = 'filesystem', 'path' = '%s', 'format' = 'csv'%s);
INSERT INTO sink SELECT id FROM gen;`, out, extra)), 0o644)
		if err != nil {
			t.Fatal(err)
		}
	}
	writeJob("")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	run := exec.Command(self, "run", "-q", script, "--checkpoint-dir", ckDir)
	run.Dir, run.Stdout, run.Stderr = dir, io.Discard, io.Discard
	if err := run.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once the part files of checkpoint 3 are committed.
	for deadline := time.Now().Add(60 * time.Second); len(committedParts(t, out, 3)) == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			run.Process.Kill()
			t.Fatal("no part file of checkpoint 3 or later committed in 60 s")
		}
	}
	if err := run.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	run.Wait()

	parts := committedParts(t, out, 0)
	var k int64
	for _, p := range parts {
		k = max(k, p.checkpoint)
	}
	chk := findCheckpoint(t, ckDir, k-1)
	before := listTree(t, out)

	execWeir := func(args ...string) error {
		root := newRootCommand()
		root.SetOut(io.Discard)
		root.SetErr(io.Discard)
		root.SetArgs(args)
		return root.Execute()
	}
	err = execWeir("run", "-q", script, "--restore", chk, "--checkpoint-dir", ckDir)
	if err == nil {
		t.Fatalf("weir run --restore %s succeeded; want the refusal of a replay of checkpoint %d's committed output", chk, k)
	}
	m := regexp.MustCompile(`the job restored checkpoint (\d+), but the sink already committed the output of checkpoint (\d+)`).
		FindStringSubmatch(err.Error())
	// The marker may be one checkpoint ahead of the files renamed: it is
	// written before them, and the kill may land in between.
	if m == nil || m[1] != strconv.FormatInt(k-1, 10) || (m[2] != strconv.FormatInt(k, 10) && m[2] != strconv.FormatInt(k+1, 10)) ||
		!strings.Contains(err.Error(), fmt.Sprintf(`filesystem sink of table "sink" (path '%s', subtask 0)`, out)) ||
		!strings.Contains(err.Error(), "accept the duplicates with 'sink.allow-replay' = 'true' on the table") {
		t.Fatalf("weir run --restore of checkpoint %d:\n got %v\nwant the refusal naming table \"sink\", %s, checkpoints %d and %d, and 'sink.allow-replay'",
			k-1, err, out, k-1, k)
	}
	if after := listTree(t, out); after != before {
		t.Fatalf("the refused restore changed the output directory:\nbefore\n%s\nafter\n%s", before, after)
	}

	var want []string
	for id := 1; id <= 2000; id++ {
		want = append(want, strconv.Itoa(id))
	}
	for _, p := range parts {
		if p.checkpoint >= k {
			want = append(want, p.lines...)
		}
	}
	writeJob(", 'sink.allow-replay' = 'true'")
	if err := execWeir("run", "-q", script, "--restore", chk, "--checkpoint-dir", ckDir); err != nil {
		t.Fatalf("weir run --restore %s with 'sink.allow-replay' = 'true': %v", chk, err)
	}
	var got []string
	for _, p := range committedParts(t, out, 0) {
		got = append(got, p.lines...)
	}
	slices.SortFunc(want, cmpNum)
	slices.SortFunc(got, cmpNum)
	if !slices.Equal(got, want) {
		t.Fatalf("output after the accepted replay: %d rows, want %d (every id once, ids of checkpoints ≥ %d twice)", len(got), len(want), k)
	}
}

func cmpNum(a, b string) int {
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	return x - y
}

type committedPart struct {
	checkpoint int64
	lines      []string
}

var finalPart = regexp.MustCompile(`^part-[0-9a-f]+(?:r\d+)?-\d+-(\d+)$`)

// committedParts returns the finished part files of dir of checkpoints ≥ from.
func committedParts(t *testing.T, dir string, from int64) []committedPart {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var out []committedPart
	for _, e := range entries {
		m := finalPart.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		id, _ := strconv.ParseInt(m[1], 10, 64)
		if id < from {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, committedPart{checkpoint: id, lines: strings.Fields(string(b))})
	}
	return out
}

// findCheckpoint returns the directory chk-<id> under dir, at any depth.
func findCheckpoint(t *testing.T, dir string, id int64) string {
	t.Helper()
	var found string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() && d.Name() == fmt.Sprintf("chk-%d", id) {
			found = p
		}
		return err
	})
	if found == "" {
		t.Fatalf("no chk-%d under %s", id, dir)
	}
	return found
}

// listTree lists the paths and sizes under dir.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b bytes.Buffer
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d\n", p, info.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
