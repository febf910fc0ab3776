// Command weir is Weir's command-line interface: it runs jobs, demos and
// tools. Each subcommand lives in its own file.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:               "weir",
		Short:             "Weir: stateful stream processing with exactly-once checkpoints",
		SilenceUsage:      true,
		SilenceErrors:     true,
		PersistentPreRunE: func(*cobra.Command, []string) error { return logs.check() },
	}
	logs.addFlags(root)
	root.AddCommand(newVersionCommand(), newToolCommand(), newRunCommand(), newDemoCommand(), newChaosCommand(), newExplainCommand(),
		newSavepointCommand(), newJobManagerCommand(), newClusterCommand(), newSubmitCommand(), newListCommand(), newCancelCommand(),
		newStopCommand(), newCheckpointsCommand(), newSQLCommand(), newExplainAnalyzeCommand(), newHotSubtasksCommand(), newTailCommand())
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Weir's version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "weir %s\n", version)
			return err
		},
	}
}

func main() {
	os.Exit(exitCode(newRootCommand().Execute()))
}
