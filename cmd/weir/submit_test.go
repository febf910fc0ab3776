package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/weirstream/weir/jobmanager"
	"github.com/weirstream/weir/rest"
)

// weir submit --name names the job even when the script SETs
// pipeline.name: --name is -D pipeline.name, and -D overrides SET.
func TestSubmitNameOverridesScript(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "named.sql")
	err := os.WriteFile(script, []byte(`
SET 'pipeline.name' = 'from-script-h6';
CREATE TABLE gen (n BIGINT) WITH ('connector' = 'datagen', 'rows-per-second' = '5');
CREATE TABLE out (n BIGINT) WITH ('connector' = 'blackhole');
INSERT INTO out SELECT n FROM gen;`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	m, ep := testJobManager(t, dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "from-script-h6"},
		{[]string{"--name", "from-flag-h6"}, "from-flag-h6"},
		{[]string{"--name", "flag-wins-h6", "-D", "pipeline.name=from-d-h6"}, "flag-wins-h6"},
	} {
		var out bytes.Buffer
		root := newRootCommand()
		root.SetOut(&out)
		root.SetArgs(append([]string{"submit", script, "--jobmanager", ep.URL()}, c.args...))
		if err := root.Execute(); err != nil {
			t.Fatalf("weir submit %v: %v", c.args, err)
		}
		id := submitted.FindStringSubmatch(out.String())
		if id == nil {
			t.Fatalf("weir submit printed %q", out.String())
		}
		j, err := m.Job(id[1])
		if err != nil {
			t.Fatal(err)
		}
		if j.Name() != c.want {
			t.Errorf("weir submit %v: job named %q, want %q", c.args, j.Name(), c.want)
		}
		j.Client().Cancel()
		_, _ = j.Client().Wait()
	}
}

// testJobManager opens a JobManager on dir with its REST endpoint on a free
// loopback port, both closed when the test ends.
func testJobManager(t *testing.T, dir string) (*jobmanager.Manager, *rest.Endpoint) {
	t.Helper()
	cfg := jobmanager.Config{jobmanager.KeySlots: "-1", jobmanager.KeyRestPort: "0", jobmanager.KeyRestBindAddress: "127.0.0.1"}
	m, err := jobmanager.Open(jobmanager.Options{Dir: dir, Config: cfg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	ep, err := rest.Listen(m, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ep.Close() })
	return m, ep
}
