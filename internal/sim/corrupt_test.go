package sim

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/weirstream/weir/checkpointstorage"
	"github.com/weirstream/weir/event"
	"github.com/weirstream/weir/internal/testsvc"
	"github.com/weirstream/weir/runtime"
)

// corruptStore is a checkpoint location and a way to damage its files
// behind the storage's back, as a disk or an operator would.
type corruptStore struct {
	loc  string
	opts checkpointstorage.Options
	// get, put and remove act on a file relative to loc ("chk-2/_metadata").
	get    func(t *testing.T, rel string) ([]byte, bool)
	put    func(t *testing.T, rel string, b []byte)
	remove func(t *testing.T, rel string)
	// store is the sink's external system, shared by the runs.
	store *Store
}

// corruptStores: a local directory and a prefix of the S3 test server's
// bucket.
var corruptStores = []struct {
	name string
	make func(t *testing.T) corruptStore
}{
	{"file", func(t *testing.T) corruptStore { return fileCorruptStore(filepath.Join(t.TempDir(), "checkpoints")) }},
	{"s3", s3CorruptStore},
}

// fileCorruptStore is the checkpoint directory dir.
func fileCorruptStore(dir string) corruptStore {
	abs := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	return corruptStore{loc: dir,
		get: func(t *testing.T, rel string) ([]byte, bool) {
			b, err := os.ReadFile(abs(rel))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			return b, err == nil
		},
		put: func(t *testing.T, rel string, b []byte) {
			if err := os.WriteFile(abs(rel), b, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		remove: func(t *testing.T, rel string) {
			if err := os.Remove(abs(rel)); err != nil {
				t.Fatal(err)
			}
		}}
}

func s3CorruptStore(t *testing.T) corruptStore {
	srv := testsvc.S3(t)
	prefix := fmt.Sprintf("sim-corrupt/%d", time.Now().UnixNano())
	cl := s3.New(s3.Options{Region: srv.Region, BaseEndpoint: aws.String(srv.Endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(srv.AccessKey, srv.SecretKey, "")})
	key := func(rel string) *string { return aws.String(prefix + "/" + rel) }
	ctx := context.Background()
	return corruptStore{loc: "s3://" + srv.Bucket + "/" + prefix,
		opts: checkpointstorage.Options{S3: checkpointstorage.S3Options{Endpoint: srv.Endpoint, Region: srv.Region,
			AccessKey: srv.AccessKey, SecretKey: srv.SecretKey}},
		get: func(t *testing.T, rel string) ([]byte, bool) {
			out, err := cl.GetObject(ctx, &s3.GetObjectInput{Bucket: &srv.Bucket, Key: key(rel)})
			if err != nil {
				return nil, false // missing (a test that needs it fails on its content)
			}
			defer out.Body.Close()
			b, err := io.ReadAll(out.Body)
			if err != nil {
				t.Fatal(err)
			}
			return b, true
		},
		put: func(t *testing.T, rel string, b []byte) {
			if _, err := cl.PutObject(ctx, &s3.PutObjectInput{Bucket: &srv.Bucket, Key: key(rel), Body: bytes.NewReader(b)}); err != nil {
				t.Fatal(err)
			}
		},
		remove: func(t *testing.T, rel string) {
			if _, err := cl.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &srv.Bucket, Key: key(rel)}); err != nil {
				t.Fatal(err)
			}
		}}
}

// damages: what can be wrong with a completed checkpoint, and the file the
// report must name. Each returns that file, relative to the location.
var damages = []struct {
	name string
	do   func(t *testing.T, cs corruptStore, m checkpointstorage.Metadata) string
}{
	{"truncated metadata", func(t *testing.T, cs corruptStore, m checkpointstorage.Metadata) string {
		rel := fmt.Sprintf("chk-%d/_metadata", m.ID)
		b, _ := cs.get(t, rel)
		cs.put(t, rel, b[:len(b)/2])
		return rel
	}},
	{"wrong checksum", func(t *testing.T, cs corruptStore, m checkpointstorage.Metadata) string {
		rel := ownStateFile(t, m)
		b, _ := cs.get(t, rel)
		b[len(b)-1] ^= 1 // same size: only the checksum tells
		cs.put(t, rel, b)
		return rel
	}},
	{"missing state file", func(t *testing.T, cs corruptStore, m checkpointstorage.Metadata) string {
		rel := ownStateFile(t, m)
		cs.remove(t, rel)
		return rel
	}},
}

// ownStateFile is a non-empty state file in checkpoint m's own directory.
func ownStateFile(t *testing.T, m checkpointstorage.Metadata) string {
	t.Helper()
	for _, h := range m.Handles {
		if strings.HasPrefix(h.Path, fmt.Sprintf("chk-%d/", m.ID)) && h.Size > 0 {
			return h.Path
		}
	}
	t.Fatalf("checkpoint %d has no state file of its own: %+v", m.ID, m.Handles)
	return ""
}

// Checkpoint corruption on restore, on a local directory and on S3: the
// newest of two checkpoints has a truncated _metadata, a state file with a
// wrong checksum, or a missing state file. restore "latest" falls back to
// the older one and says so at error level, naming the checkpoint and the
// file; the corrupt one is moved aside (chk-N.corrupt), not deleted. When
// both are damaged, "latest" refuses to start, naming each checkpoint and
// file, and touches nothing; "latest-or-empty" starts empty and moves both
// aside.
func TestRestoreLatestSkipsCorruptCheckpoint(t *testing.T) {
	for _, st := range corruptStores {
		for _, d := range damages {
			t.Run(st.name+"/"+d.name, func(t *testing.T) {
				t.Parallel() // each on its own location and store; S3 round trips dominate
				cs := st.make(t)
				older, newer := twoCheckpoints(t, &cs)
				file := d.do(t, cs, newer)
				res, logs, err := restoreBounded(t, cs, runtime.RestoreLatest)
				if err != nil {
					t.Fatalf("restore latest: %v; want checkpoint %d", err, older.ID)
				}
				if res.RestoredFrom != older.ID {
					t.Fatalf("restore latest restored %d; want checkpoint %d", res.RestoredFrom, older.ID)
				}
				// One line says both, whatever other attributes (job) it has.
				msg := fmt.Sprintf(`level=ERROR msg="CORRUPT CHECKPOINT skipped; restoring older checkpoint %d" `, older.ID)
				at := fmt.Sprintf(` checkpoint=%d file=%s `, newer.ID, cs.loc+"/"+file)
				if !slices.ContainsFunc(strings.Split(logs, "\n"), func(l string) bool {
					return strings.Contains(l, msg) && strings.Contains(l, at)
				}) {
					t.Errorf("logs lack a line with %q and %q:\n%s", msg, at, logs)
				}
				if _, ok := cs.get(t, fmt.Sprintf("chk-%d.corrupt/_metadata", newer.ID)); !ok {
					t.Errorf("chk-%d not moved aside to chk-%d.corrupt", newer.ID, newer.ID)
				}
			})
		}
		t.Run(st.name+"/none valid", func(t *testing.T) {
			t.Parallel()
			cs := st.make(t)
			older, newer := twoCheckpoints(t, &cs)
			// The newer one fails only as its state is read, the older one
			// already in the catalog.
			files := []string{damages[1].do(t, cs, newer), damages[0].do(t, cs, older)}
			_, _, err := restoreBounded(t, cs, runtime.RestoreLatest)
			if !errors.Is(err, checkpointstorage.ErrNoCheckpoint) {
				t.Fatalf("restore latest with no valid checkpoint: %v; want ErrNoCheckpoint", err)
			}
			for i, m := range []checkpointstorage.Metadata{newer, older} {
				if want := fmt.Sprintf("chk-%d, corrupt: %s/%s", m.ID, cs.loc, files[i]); !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not name %q", err, want)
				}
				if _, ok := cs.get(t, fmt.Sprintf("chk-%d/_metadata", m.ID)); !ok {
					t.Errorf("a refused restore moved chk-%d", m.ID)
				}
			}
			res, logs, err := restoreBounded(t, cs, runtime.RestoreLatestOrEmpty)
			if err != nil {
				t.Fatalf("restore latest-or-empty: %v; want an empty start, said:\n%s", err, logs)
			}
			if res.RestoredFrom != 0 || !strings.Contains(logs, "starting empty") {
				t.Fatalf("restore latest-or-empty restored %d; want an empty start, said:\n%s", res.RestoredFrom, logs)
			}
			for _, m := range []checkpointstorage.Metadata{newer, older} {
				if _, ok := cs.get(t, fmt.Sprintf("chk-%d.corrupt/_metadata", m.ID)); !ok {
					t.Errorf("chk-%d not moved aside", m.ID)
				}
			}
		})
	}
}

// twoCheckpoints runs an unbounded job on cs until two checkpoints
// completed, both retained, and returns their metadata.
func twoCheckpoints(t *testing.T, cs *corruptStore) (older, newer checkpointstorage.Metadata) {
	t.Helper()
	cs.store = NewStore()
	src := &SeqSource{Keys: 2, PerKey: 1000, Splits: 1, Burst: 5, Pause: time.Millisecond, Unbounded: true}
	jg := seqJob{Source: src, SourcePar: 1, Faults: NewPlan(), KeyedPar: 1, V: &Violations{}, Sink: &TxSink{Store: cs.store}}.jobGraph(t)
	opts := testOptions(cs.loc, 10*time.Millisecond)
	opts.CheckpointStorage, opts.Retained = cs.opts, 5
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var done []event.CheckpointID
	opts.Listener = func(e runtime.Event) { // on the driver goroutine
		if e.Kind == runtime.EventCheckpointCompleted {
			if done = append(done, event.CheckpointID(e.Checkpoint)); len(done) == 2 {
				cancel()
			}
		}
	}
	_, err := runtime.Run(ctx, jg, opts)
	if len(done) < 2 {
		t.Fatalf("the job completed checkpoints %v before its deadline (%v); want two", done, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run returned %v after the cancel; want context.Canceled", err)
	}
	s, err := checkpointstorage.Open(cs.loc, cs.opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if older, err = s.ReadMetadata(done[0]); err == nil {
		newer, err = s.ReadMetadata(done[1])
	}
	if err != nil {
		t.Fatal(err)
	}
	return older, newer
}

// restoreBounded runs the job, bounded, restoring which from cs, and
// returns its result and log.
func restoreBounded(t *testing.T, cs corruptStore, which string) (*runtime.Result, string, error) {
	t.Helper()
	src := &SeqSource{Keys: 2, PerKey: 1000, Splits: 1, Burst: 50}
	jg := seqJob{Source: src, SourcePar: 1, Faults: NewPlan(), KeyedPar: 1, V: &Violations{}, Sink: &TxSink{Store: cs.store}}.jobGraph(t)
	opts := testOptions(cs.loc, 0)
	opts.CheckpointStorage, opts.Retained, opts.Restore = cs.opts, 5, which
	opts.Restart = runtime.NoRestart{}
	logs := &strings.Builder{} // slog's handler locks around writes; read after Run returned
	opts.Logger = slog.New(slog.NewTextHandler(logs, nil))
	res, err := runJob(context.Background(), jg, opts)
	return res, logs.String(), err
}
