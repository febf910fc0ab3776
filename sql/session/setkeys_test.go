package session

import "testing"

// Set (weir run --set) refuses a typo of a known key, keeps a known key,
// and keeps an unknown key that is no typo (Flink accepts any key).
func TestSetChecksKeys(t *testing.T) {
	s := New()
	err := s.Set("paralelism.default", "2")
	if err == nil || err.Error() != "unknown option 'paralelism.default'; did you mean 'parallelism.default'?" {
		t.Fatalf("typo: %v", err)
	}
	if _, ok := s.Settings["paralelism.default"]; ok {
		t.Fatal("the misspelled key was kept")
	}
	for _, kv := range [][2]string{{"parallelism.default", "2"}, {"taskmanager.numberOfTaskSlots", "4"}} {
		if err := s.Set(kv[0], kv[1]); err != nil || s.Settings[kv[0]] != kv[1] {
			t.Errorf("Set(%q): %v, settings %v", kv[0], err, s.Settings)
		}
	}
}
