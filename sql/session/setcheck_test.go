package session

import "testing"

// A refused SET keeps the previous value; a value that only another key
// makes invalid (mini-batch enabled before its latency) is accepted.
func TestSetCheckedKeepsPreviousValue(t *testing.T) {
	s := New()
	if err := s.Set("parallelism.default", "3"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("parallelism.default", "three"); err == nil {
		t.Fatal("SET 'parallelism.default' = 'three' was accepted")
	}
	if got := s.Settings["parallelism.default"]; got != "3" {
		t.Fatalf("parallelism.default is %q after a refused SET, want 3", got)
	}
	if err := s.Set("table.exec.state.ttl", "1 fortnight"); err == nil {
		t.Fatal("a ttl of 1 fortnight was accepted")
	}
	if _, ok := s.Settings["table.exec.state.ttl"]; ok {
		t.Fatal("a refused SET of an unset key left it set")
	}
	if err := s.Set("table.exec.mini-batch.enabled", "true"); err != nil {
		t.Fatalf("mini-batch enabled before its latency is set: %v", err)
	}
	if err := s.Set("table.exec.mini-batch.allow-latency", "2 s"); err != nil {
		t.Fatal(err)
	}
}
