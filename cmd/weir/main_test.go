package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestVersionCommand(t *testing.T) {
	var out bytes.Buffer
	root := newRootCommand()
	root.SetOut(&out)
	root.SetArgs([]string{"version"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "weir "+version+"\n"; got != want {
		t.Fatalf("version printed %q, want %q", got, want)
	}
}

func TestUnknownCommandFails(t *testing.T) {
	root := newRootCommand()
	root.SetArgs([]string{"no-such-command"})
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err == nil {
		t.Fatal("unknown command succeeded")
	}
}

// weir cluster start is weir jobmanager: it reads the JobManager's
// configuration, from -D and from $WEIR_PROPERTIES (here invalid, so it
// stops before it listens).
func TestClusterStartReadsTheJobManagerConfig(t *testing.T) {
	for _, tc := range []struct {
		env  string
		args []string
	}{
		{"", []string{"cluster", "start", "-D", "rest.port=http"}},
		{"rest.port: http", []string{"cluster", "start"}},
		{"rest.port: http", []string{"jobmanager"}},
	} {
		t.Setenv("WEIR_PROPERTIES", tc.env)
		root := newRootCommand()
		root.SetArgs(tc.args)
		root.SetOut(&bytes.Buffer{})
		root.SetErr(&bytes.Buffer{})
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), `rest.port: "http" is not a number`) {
			t.Errorf("weir %v with WEIR_PROPERTIES=%q: %v, want the bad rest.port named", tc.args, tc.env, err)
		}
	}
}
