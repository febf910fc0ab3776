package session

import "testing"

// Flink's execution.savepoint.path and ignore-unclaimed-state reach the
// runtime (a SQL user restores with SET, as in Flink's SQL client).
func TestSavepointRestoreSettings(t *testing.T) {
	st := Settings{
		"execution.savepoint.path":                   "file:///tmp/sp/savepoint-1",
		"execution.savepoint.ignore-unclaimed-state": "true",
	}
	o, err := st.RuntimeOptions("job")
	if err != nil {
		t.Fatal(err)
	}
	if o.Restore != "/tmp/sp/savepoint-1" || !o.IgnoreUnclaimedState {
		t.Fatalf("Restore %q, IgnoreUnclaimedState %v; want /tmp/sp/savepoint-1, true", o.Restore, o.IgnoreUnclaimedState)
	}
	st["execution.savepoint.ignore-unclaimed-state"] = "yes"
	if _, err := st.RuntimeOptions("job"); err == nil ||
		err.Error() != "SET 'execution.savepoint.ignore-unclaimed-state' = 'yes': want true or false" {
		t.Fatalf("bad bool: %v", err)
	}
}
