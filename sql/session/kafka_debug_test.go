package session

import (
	"os"
	"strings"
	"testing"
)

func TestDebugE2E(t *testing.T) {
	e := newE2E(t)
	e.produceBills(2000, 30)
	script := e.script()
	parts := strings.Split(script, "INSERT INTO")
	switch os.Getenv("ONLY") {
	case "db":
		script = parts[0] + "INSERT INTO" + parts[1]
	case "topic":
		script = parts[0] + "INSERT INTO" + parts[2]
	}
	s := New()
	if err := s.Execute(script); err != nil {
		t.Fatal(err)
	}
	_ = s
	e.script0 = script
	r, f := e.runUntilCheckpoint(false)
	t.Log(r, f)
}
