package client

import (
	"context"
	"errors"
	"io"
	"strings"

	"github.com/chzyer/readline"

	"github.com/weirstream/weir/sql/parser"
)

// Prompts: a new statement's, and the continuation of one spanning lines.
const (
	Prompt             = "Weir SQL> "
	ContinuationPrompt = "> "
)

// Interactive reads statements from the terminal with line editing and
// history (kept in historyFile; "" keeps none) until QUIT;, EXIT; or
// Ctrl-D. A statement runs once a line ends it with ';'; until then the
// continuation prompt asks for more. Ctrl-C drops what is being typed. An
// error is printed and the shell goes on.
func (sh *Shell) Interactive(ctx context.Context, historyFile string) error {
	rl, err := readline.NewEx(&readline.Config{Prompt: Prompt, HistoryFile: historyFile,
		DisableAutoSaveHistory: true, HistorySearchFold: true, Stdout: sh.opts.Out})
	if err != nil {
		return err
	}
	defer rl.Close()
	var typed string
	for {
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			typed = ""
			rl.SetPrompt(Prompt)
			continue
		case errors.Is(err, io.EOF):
			io.WriteString(sh.opts.Out, "\nShutting down the session...\ndone.\n")
			return nil
		case err != nil:
			return err
		}
		pieces, rest := parser.Split(typed + line + "\n")
		for _, p := range pieces {
			_ = rl.SaveHistory(oneLine(p.Text))
			if err := sh.Execute(ctx, p, ""); errors.Is(err, errQuit) {
				return nil
			}
		}
		typed = rest
		if strings.TrimSpace(rest) == "" {
			typed = ""
			rl.SetPrompt(Prompt)
		} else {
			rl.SetPrompt(ContinuationPrompt)
		}
	}
}

// oneLine is a statement as history keeps it: its lines joined by
// spaces, so that one Up brings all of it back; whole-line comments are
// dropped (joined, they would hide the rest).
func oneLine(text string) string {
	var parts []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "--") {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, " ")
}
