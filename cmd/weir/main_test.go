package main

import (
	"bytes"
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
