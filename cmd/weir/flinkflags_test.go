package main

import (
	"testing"

	"github.com/spf13/cobra"
)

// Flink's `flink run -s PATH` and `--fromSavepoint PATH` restore as
// --restore does, on weir run and weir submit.
func TestFlinkRestoreFlagNames(t *testing.T) {
	for name, mk := range map[string]func() *cobra.Command{"run": newRunCommand, "submit": newSubmitCommand} {
		for _, args := range [][]string{{"-s", "/sp/savepoint-1"}, {"--fromSavepoint", "/sp/savepoint-1"}, {"--restore", "/sp/savepoint-1"}} {
			cmd := mk()
			if err := cmd.ParseFlags(args); err != nil {
				t.Fatalf("%s %v: %v", name, args, err)
			}
			got, err := cmd.Flags().GetString("restore")
			if err != nil {
				t.Fatal(err)
			}
			if got != "/sp/savepoint-1" {
				t.Errorf("%s %v: --restore is %q", name, args, got)
			}
		}
	}
}
